"""Running `trapline trace -e` and the native oracles (Debian's strace and gdb on the host) for
the probe language's end-to-end tests."""
import os
import re
import subprocess
import tempfile
from pathlib import Path

from tests.e2e.forkserver import run_trapline
from tests.e2e.host_tools import ensure_gdb

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT / "samples" / "bin"
ARCHES = ("i386", "x86_64")
# the sandbox's default environment (trapline/sandbox.py DEFAULT_ENV), for the native runs
GUEST_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "HOME": "/root",
             "TERM": "dumb", "LANG": "C", "USER": "root", "LOGNAME": "root", "SHELL": "/bin/sh"}
_MAP_LINE = re.compile(r"^(@[\w]*)(?:\[(.*)\])?: (.*)$")


def sample(arch: str, name: str) -> str:
    return str(SAMPLES / arch / name)


def trace(*args: str, cwd=ROOT, check: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}          # this checkout's trapline, from any cwd
    # forked from the worker's warm trapline (tests/e2e/forkserver.py), as python -m would run it
    done = run_trapline(["trace", *args], cwd=cwd, env=env, text=True, timeout=600)
    if check:
        assert done.returncode == 0, done.stderr
    return done


def maps(stdout: str) -> dict[str, dict[str, str]]:
    """`@name[key]: value` lines -> {name: {key: value}} (a scalar map's key is "")."""
    found: dict[str, dict[str, str]] = {}
    for line in stdout.splitlines():
        match = _MAP_LINE.match(line)
        if match:
            found.setdefault(match.group(1), {})[match.group(2) or ""] = match.group(3)
    return found


def native_syscall_counts(argv: list[str], cwd=ROOT) -> dict[str, int]:
    """Debian's strace -f -c on the host: calls per system call (the calls that finished:
    strace counts no exit_group, and the first execve is strace's own)."""
    out = subprocess.run(["strace", "-f", "-c", "-U", "name,calls", "-o", "/dev/stderr", *argv],
                         cwd=cwd, env=GUEST_ENV, capture_output=True, text=True, timeout=600)
    counts = {}
    for line in out.stderr.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit() and parts[0] != "total":
            counts[parts[0]] = int(parts[1])
    return counts


def native_breakpoint_hits(argv: list[str], function: str, cwd=ROOT) -> int:
    """gdb on the host: how often a breakpoint on `function` is hit in a whole run."""
    script = (f"set breakpoint pending on\nset pagination off\nbreak {function}\n"
              "commands\nsilent\ncontinue\nend\nrun\ninfo breakpoints\n")
    with tempfile.NamedTemporaryFile("w", suffix=".gdb") as commands:
        commands.write(script)
        commands.flush()
        out = subprocess.run([ensure_gdb(), "-nx", "-batch", "-x", commands.name, "--args", *argv],
                             cwd=cwd,
                             env=GUEST_ENV, capture_output=True, text=True, timeout=600)
    found = re.search(r"breakpoint already hit (\d+) time", out.stdout)
    assert found is not None, out.stdout + out.stderr
    return int(found.group(1))
