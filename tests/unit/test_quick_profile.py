"""The quick profile (tests/quick_profile.py): `--quick` leaves out the points marked thorough
and loads hypothesis's "quick" profile; without it every point runs, with the profile chosen as
before. Checked on a throwaway test file run by its own pytest."""
import os
import subprocess
import sys
from pathlib import Path

from tests.quick_profile import QUICK_EXAMPLES

REPO = Path(__file__).resolve().parents[2]

PROBE = '''
import pytest
from hypothesis import given, settings, strategies as st
from tests.quick_profile import THOROUGH, alternates, thorough_unless

@pytest.mark.parametrize("point", [thorough_unless(True, "kept"), thorough_unless(False, "grid"),
                                   pytest.param("marked", marks=THOROUGH)])
def test_point(point):
    pass

@pytest.mark.thorough
def test_whole_function_marked():
    pass

@alternates("arch")
@pytest.mark.parametrize("case", ["c1", "c2", "c3", "c4"])
@pytest.mark.parametrize("arch", ["amd64", "i386"])
def test_grid(arch, case):
    pass

def test_profile_examples():
    print(f"max_examples={settings.default.max_examples};")
'''


def run_probe(tmp_path, *options: str) -> str:
    (tmp_path / "test_probe.py").write_text(PROBE)
    # Only the plugins the question needs: hypothesis's and the quick profile (no entry points).
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    env.pop("CI", None)             # hypothesis picks its "ci" profile on CI: not this question
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "_hypothesis_pytestplugin", "-p",
                           "tests.quick_profile", "-p",
                           "no:cacheprovider", "-s", "-rN", "-v",
                           str(tmp_path / "test_probe.py"), *options],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_quick_leaves_out_the_thorough_points_and_loads_the_quick_examples(tmp_path):
    out = run_probe(tmp_path, "--quick")
    assert "test_point[kept] PASSED" in out
    assert "[grid]" not in out and "[marked]" not in out and "whole_function" not in out
    assert f"max_examples={QUICK_EXAMPLES};" in out
    # every case once, the arches in turn
    grid = sorted(line.split("[", 1)[1].split("]")[0] for line in out.splitlines()
                  if "::test_grid[" in line and "PASSED" in line)
    assert grid == ["amd64-c1", "amd64-c3", "i386-c2", "i386-c4"], out
    assert "7 deselected" in out


def test_without_quick_every_point_runs_with_the_chosen_profile(tmp_path):
    out = run_probe(tmp_path)
    for name in ("test_point[kept]", "test_point[grid]", "test_point[marked]",
                 "test_whole_function_marked", *(f"test_grid[{arch}-c{n}]"
                                                 for arch in ("amd64", "i386") for n in range(1, 5))):
        assert f"{name} PASSED" in out, out
    assert "deselected" not in out
    assert f"max_examples={QUICK_EXAMPLES};" not in out


def test_an_explicit_hypothesis_profile_wins_over_quick(tmp_path):
    out = run_probe(tmp_path, "--quick", "--hypothesis-profile=default")
    assert "7 deselected" in out
    assert "max_examples=100;" in out      # hypothesis's own default profile
