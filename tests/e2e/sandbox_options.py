"""``trapline run`` with CLI options that sandbox_runner.run_sandbox does not take.

The scheduler's ``--quantum`` and strace's ``-f`` came after run_sandbox was written; the
tests of the process model need them. The command is built the same way (clean
environment, explicit ``-E`` in dict order, captured stdio, run from the repository) and
the outcome is the same Result, so assert_same_behaviour and friends apply unchanged.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.e2e.forkserver import run_trapline
from tests.e2e.sandbox_runner import Result, RunTimeout


def run_sandbox_with_options(
    argv: list[str],
    options: list[str],
    *,
    rootfs: Path,
    env: dict[str, str],
    cwd: str = "/",
    timeout: float = 300,
) -> Result:
    """``python -m trapline run OPTIONS --rootfs R --cwd C --clear-env -E.. -- argv``."""
    command = [sys.executable, "-m", "trapline", "run", *options,
               "--rootfs", str(rootfs), "--cwd", cwd, "--clear-env"]
    for key, value in env.items():
        command += ["-E", f"{key}={value}"]
    command += ["--", *argv]
    try:
        done = run_trapline(command[3:], timeout=timeout)        # forked: forkserver.py
    except subprocess.TimeoutExpired:
        raise RunTimeout(f"sandbox run {command} exceeded {timeout}s") from None
    return Result("sandbox", tuple(argv), done.stdout, done.stderr, done.returncode,
                  tuple(command))
