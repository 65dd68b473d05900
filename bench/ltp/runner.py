"""Run one LTP test natively and under trapline, with the same environment and a time limit.

Both runs are made as root (LTP's syscall tests expect it) in a fresh temporary folder that is
also TMPDIR (where LTP makes its own temporary folder), with the built tests first in PATH.
Under trapline the program is `python3 -m trapline run -v` of the same command (host root with
its in-memory overlay), so the guest sees the same files, arguments and variables.
"""
import os
import shlex
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Outcome:
    returncode: int | None          # None: killed at the time limit
    output: bytes                   # stdout and stderr together


def read_runtest(path: Path) -> list[tuple[str, list[str]]]:
    """(test name, command) of each line of a runtest file (comments and blanks skipped)."""
    tests = []
    for line in path.read_text(errors="replace").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            name, *command = shlex.split(line)
            if command:
                tests.append((name, command))
    return tests


def environment(bin_dir: Path, tmp: str, ltp_root: Path) -> dict[str, str]:
    return {"PATH": f"{bin_dir}:/usr/sbin:/usr/bin:/sbin:/bin", "TMPDIR": tmp, "HOME": "/root",
            "LANG": "C", "LTPROOT": str(ltp_root), "LTP_COLORIZE_OUTPUT": "0", "TERM": "dumb"}


def run(command: list[str], bin_dir: Path, ltp_root: Path, timeout: float, under_trapline: bool) -> Outcome:
    program = command[0] if "/" in command[0] else str(bin_dir / command[0])
    with tempfile.TemporaryDirectory(prefix="ltp-") as tmp:
        env = environment(bin_dir, tmp, ltp_root)
        argv = [program, *command[1:]]
        if under_trapline:
            options = ["--clear-env", "--cwd", tmp, *(f"-E{k}={v}" for k, v in env.items())]
            argv = [sys.executable, "-m", "trapline", "run", "-v", *options, "--", *argv]
            host_env = dict(os.environ, PYTHONPATH=str(REPO))
        else:
            host_env = env
        return _run_bounded(argv, tmp if not under_trapline else str(REPO), host_env, timeout)


def _run_bounded(argv, cwd: str, env: dict, timeout: float) -> Outcome:
    """Run argv in a session of its own; at the time limit the whole session is killed (a
    test's forked children too), by the id of the group this call made."""
    child = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        output, _ = child.communicate(timeout=timeout)
        return Outcome(child.returncode, output)
    except subprocess.TimeoutExpired:
        kill_session(child.pid)
        output, _ = child.communicate()
        return Outcome(None, output)


def kill_session(sid: int) -> None:
    """SIGKILL every process of session `sid` (the one this runner started the test in). Its
    process group is not enough: LTP's library puts each test in a group of its own
    (setpgid in tst_test.c fork_testrun) to kill it as a whole itself."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid pgrp session ...: comm may hold spaces, so split after ')'
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[3]) == sid:
            try:
                os.kill(int(entry.name), signal.SIGKILL)
            except ProcessLookupError:
                pass
