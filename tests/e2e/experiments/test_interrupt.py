"""Ctrl-C during `trapline experiment run` (issue 28): the command stops submitting, keeps the
points that finished, leaves a folder whose manifest says "partial" and lists them, and exits
130 as a shell reports SIGINT; `--resume DIR` runs the rest into a complete folder."""
import os
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
POINTS = 40
SPEC = f"""
name = "interrupted"
[program]
sample = "loss_threads"
argv = ["4", "100"]
[run]
probes = ["uprobe:loss_threads:probed"]
strategy = "singlestep-stopall"
[sweep]
quantum = {list(range(1, POINTS + 1))}
"""


def _manifest(out: Path) -> dict:
    try:
        return tomllib.loads((out / "manifest.toml").read_text())
    except (FileNotFoundError, tomllib.TOMLDecodeError):
        return {}


@pytest.mark.e2e
def test_ctrl_c_leaves_a_partial_folder_that_resume_completes(tmp_path):
    (tmp_path / "spec.toml").write_text(SPEC)
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = subprocess.Popen([sys.executable, "-m", "trapline", "experiment", "run",
                                str(tmp_path / "spec.toml"), "-o", str(out), "-j", "1"],
                               cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        while command.poll() is None and not _manifest(out).get("points_done"):
            time.sleep(0.05)                # until a point is done: not a timed assertion
        command.send_signal(signal.SIGINT)
        stdout, stderr = command.communicate(timeout=300)
    finally:
        command.kill()
    assert command.returncode == 130, (stdout, stderr)
    manifest = _manifest(out)
    done = manifest["points_done"]
    assert manifest["status"] == "partial" and 1 <= len(done) < POINTS, manifest
    assert manifest["partial_because"] == "interrupted (Ctrl-C)"
    rows = (out / "results.csv").read_text().splitlines()[1:]
    assert [int(row.split(",")[0]) for row in rows] == done
    assert f"partial, {len(done)} of {POINTS} points done" in stdout
    resumed = subprocess.run([sys.executable, "-m", "trapline", "experiment", "run", "--resume",
                              str(out), "-j", "2"], cwd=tmp_path, env=env, capture_output=True,
                             text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    manifest = _manifest(out)
    assert (manifest["status"], manifest["points_done"]) == ("complete", list(range(POINTS)))
    rows = (out / "results.csv").read_text().splitlines()[1:]
    assert len(rows) == POINTS and all(",ok,," in row for row in rows)
