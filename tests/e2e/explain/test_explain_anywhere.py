"""An explanation does not depend on where trapline and its samples lie: the fib the detach,
relocate and trampoline techniques run is started as ./fib from its folder (guest.py), so no
host path lands on its stack. A copy of the samples under a longer path
($TRAPLINE_SAMPLES, trapline/samples.py) gives the very same text."""
import os
import shutil
import subprocess
import sys

import pytest

from tests.e2e.sandbox_runner import REPO_ROOT

pytestmark = pytest.mark.e2e


def _explain(technique: str, env: dict) -> str:
    done = subprocess.run([sys.executable, "-m", "trapline", "explain", "--technique", technique,
                           "--arch", "x86_64"], cwd=REPO_ROOT, env=env, capture_output=True,
                          text=True, timeout=300, check=True)
    return done.stdout


@pytest.mark.parametrize("technique", ["detach", "relocate"])
def test_the_same_explanation_from_a_folder_of_another_length(technique, tmp_path):
    elsewhere = tmp_path / ("a-longer-folder-name-" * 3) / "bin"
    shutil.copytree(REPO_ROOT / "samples" / "bin" / "x86_64", elsewhere / "x86_64")
    here = _explain(technique, dict(os.environ))
    moved = _explain(technique, {**os.environ, "TRAPLINE_SAMPLES": str(elsewhere)})
    assert "0x7fffffff" in here          # the text shows stack addresses
    assert moved == here
