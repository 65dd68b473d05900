"""The collector waits while the `trapline` command starts and runs again for the guest's run
(trapline/collector.py, issue 31): off from trapline/entry.py's import, on (start-up's objects
frozen) once any command's work starts, and never touched by a library import of trapline.cli."""
import subprocess
import sys
from pathlib import Path

import pytest

HELLO = Path(__file__).resolve().parents[3] / "samples" / "bin" / "x86_64" / "hello"

SCRIPT = """
import gc, sys
import trapline.entry
paused = not gc.isenabled()
from trapline.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(paused, gc.isenabled(), gc.get_freeze_count() > 1000, file=sys.stderr)
"""


def _collector_states(*args: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", SCRIPT, *args], capture_output=True, text=True,
                          timeout=120)
    return done.stderr.strip().splitlines()[-1].split()


@pytest.mark.parametrize("args", [("run", "--", str(HELLO)),
                                  ("trace", "-p", "proc:exit", "--", str(HELLO)),
                                  ("profile", "--help")], ids=["run", "trace", "another"])
def test_the_collector_waits_for_start_up_and_runs_for_the_command(args):
    assert _collector_states(*args) == ["True", "True", "True"]


def test_importing_the_cli_as_a_library_leaves_the_collector_alone():
    done = subprocess.run([sys.executable, "-c", "import gc, trapline.cli; print(gc.isenabled())"],
                          capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "True"
