"""A shipped spec runs from an installed trapline, outside the source tree (issue 28): the wheel
built from this checkout carries the specs (package data) and the sample binaries they run
(data files under PREFIX/share/trapline/samples), so nothing points back into the checkout.

The wheel is built from a copy of the files it packages (the build writes build/ and egg-info
where it runs), installed into a fresh virtual environment in a temporary folder that sees the
system's site-packages for unicorn, dask and matplotlib (so nothing is downloaded but the build
backend), and run from another temporary folder."""
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
PACKAGED = ("emu", "loader", "kernel_model", "instrumenter", "trapline")
SPEC = """
name = "installed"
[program]
sample = "hello"
[run]
probes = ["syscall:writev", "syscall:write"]
[sweep]
arch = ["i386", "x86_64"]
"""


def _run(args, cwd, env, timeout=600):
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{args}: {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("installed")
    source = work / "source"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.so", "*.egg-info")
    for name in PACKAGED:
        shutil.copytree(ROOT / name, source / name, ignore=ignore)
    shutil.copytree(ROOT / "samples" / "bin", source / "samples" / "bin", ignore=ignore)
    for name in ("setup.cfg", "pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TRAPLINE_SAMPLES")}
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(work / "wheel"),
          str(source)], work, env)
    wheel = next((work / "wheel").glob("trapline-*.whl"))
    _run([sys.executable, "-m", "venv", "--system-site-packages", str(work / "venv")], work, env)
    _run([str(work / "venv" / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps",
          "--no-index", "--force-reinstall", str(wheel)], work, env)
    shutil.rmtree(source)                     # nothing of the copy can be used after this
    return work / "venv"


@pytest.mark.e2e
def test_a_spec_runs_and_verifies_from_the_installed_wheel(venv, tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TRAPLINE_SAMPLES")}
    python = str(venv / "bin" / "python")
    where = _run([python, "-c", "import trapline, trapline.experiments.samples as s; "
                  "print(trapline.__file__); print(s.samples_dir())"], tmp_path, env).split()
    assert all(Path(p).is_relative_to(venv) for p in where), where
    trapline = str(venv / "bin" / "trapline")
    listed = _run([trapline, "experiment", "list"], tmp_path, env).splitlines()
    assert [line.split()[0] for line in listed] == ["children", "detach", "loss", "probe-cost",
                                                     "profile-error", "walkup"]
    assert "name = \"probe-cost\"" in _run([trapline, "experiment", "show", "probe-cost"], tmp_path, env)
    (tmp_path / "installed.toml").write_text(SPEC)
    _run([trapline, "experiment", "run", "installed.toml", "-o", "out", "-j", "2"], tmp_path, env)
    manifest = tomllib.loads((tmp_path / "out" / "manifest.toml").read_text())
    assert manifest["status"] == "complete"
    assert sorted(i["source"] for i in manifest["inputs"] if i["role"] == "file") == [
        "sample:i386/hello", "sample:x86_64/hello"]
    assert manifest["environment"]["git_commit"] == ""         # an installed wheel, no checkout
    rows = (tmp_path / "out" / "results.csv").read_text().splitlines()
    assert len(rows) == 3 and all(",ok,," in row for row in rows[1:])
    assert "verified" in _run([trapline, "experiment", "verify", "out", "-j", "2"], tmp_path, env)
    # a shipped spec by name, its first two points (the loss sweep has 224)
    out = _run([trapline, "experiment", "run", "loss", "-o", "loss", "--limit", "2", "-j", "2"],
               tmp_path, env)
    assert "partial, 2 of 224 points done" in out
    loss = (tmp_path / "loss" / "results.csv").read_text().splitlines()
    assert [row.split(",")[1:4] for row in loss[1:]] == [["200", "i386", "threads"]] * 2
