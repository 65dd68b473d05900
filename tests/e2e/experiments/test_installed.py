"""A shipped spec runs from an installed trapline, outside the source tree (issue 28), and so
does every command of `trapline --help`, `--version` too (issue 33): the wheel
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


# Each command `trapline --help` lists, run once from the installed wheel on the installed
# samples ({samples}: PREFIX/share/trapline/samples), and a text its output shows.
COMMANDS = {
    "run": (["run", "-c", "-S", "name", "-o", "table", "--", "{samples}/i386/hello"], "hello, world"),
    "trace": (["trace", "-p", "syscall:writev", "--", "{samples}/x86_64/hello"], "syscall:writev args="),
    "profile": (["profile", "--record", "fib.rec", "--", "{samples}/x86_64/fib", "20"], "fib(20) = 6765"),
    "report": (["report", "fib.rec"], "samples, one every 10000 guest instructions"),
    "check": (["check", "--arch", "x86_64", "--examples", "1", "--strategy", "trampoline",
               "--no-host", "--time-limit", "5"], "removal and detach"),
    # (the handler technique: a sample and a shipped handler, share/trapline/handlers)
    "explain": (["explain", "--arch", "x86_64", "--technique", "handler"],
                "every call of fib had its n clamped to 5"),
    "gdbserver": (["gdbserver", "--stdio", "--", "{samples}/x86_64/hello"], "$W00;process:"),
    "experiment": (["experiment", "list"], "probe-cost"),
}
GDB_PACKETS = "+$?#3f+$c#63+"        # the stop reason, then continue to the exit (GDB remote protocol)


def _run(args, cwd, env, timeout=600, stdin=None):
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
                          input=stdin)
    assert done.returncode == 0, f"{args}: {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr if stdin is not None or "--record" in args else done.stdout


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("installed")
    source = work / "source"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.so", "*.egg-info")
    for name in PACKAGED:
        shutil.copytree(ROOT / name, source / name, ignore=ignore)
    for shipped in ("bin", "handlers"):         # setup.cfg's data files
        shutil.copytree(ROOT / "samples" / shipped, source / "samples" / shipped, ignore=ignore)
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


@pytest.mark.e2e
def test_every_command_runs_from_the_installed_wheel(venv, tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TRAPLINE_SAMPLES")}
    trapline = str(venv / "bin" / "trapline")
    assert {line.split()[0] for line in _commands(trapline, tmp_path, env)} == set(COMMANDS)
    completion = _run([trapline], tmp_path, {**env, "_TRAPLINE_COMPLETE": "bash_source"})
    assert "complete -o nosort -F _trapline_completion trapline" in completion
    version = _run([trapline, "--version"], tmp_path, env)
    assert version.startswith("trapline -- version ") and version.split()[-1][0].isdigit()
    samples = _run([str(venv / "bin" / "python"), "-c", "import trapline.experiments.samples as s; "
                    "print(s.samples_dir())"], tmp_path, env).strip()
    assert Path(samples).is_relative_to(venv)
    for name, (argv, shown) in COMMANDS.items():
        argv = [arg.replace("{samples}", samples) for arg in argv]
        stdin = GDB_PACKETS if name == "gdbserver" else None
        out = _run([trapline, *argv], tmp_path, env, stdin=stdin)
        assert shown in out, f"{name}: {out[-2000:]}"
    table = (tmp_path / "table").read_text()
    assert "System call usage summary for 32 bit mode:" in table and table.endswith(" total\n")


def _commands(trapline: str, cwd, env) -> list[str]:
    """The command lines of `trapline --help`'s Commands: section."""
    text = _run([trapline, "--help"], cwd, env)
    return [line for line in text.split("Commands:")[1].splitlines() if line.startswith("  ")
            and not line.startswith("   ")]
