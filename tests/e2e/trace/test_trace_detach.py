"""`trapline trace --detach-after N` and `--detach-on SIGNAL` (trapline/cli/detach.py): the
records stop at the detach and the program runs on to its normal end with its native output."""
import re
import subprocess
import sys

import pytest

from tests.e2e.gdb_client import REPO

pytestmark = pytest.mark.e2e


def trace(*argv):
    done = subprocess.run([sys.executable, "-m", "trapline", "trace", *argv], cwd=REPO,
                          capture_output=True, timeout=300)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def records(out: str, probe: str) -> list[int]:
    return [int(m) for m in re.findall(rf"^\s*(\d+)\s+\d+\s+\d+ {re.escape(probe)} ", out, re.M)]


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_detach_after_n_instructions(arch):
    program = str(REPO / "samples" / "bin" / arch / "fib")
    probes = ["-p", "uprobe:fib:fib", "-p", "uretprobe:fib:fib"]
    status, full, _ = trace(*probes, program, "10")
    status_detached, out, err = trace(*probes, "--detach-after", "3000", "-v", program, "10")
    assert status == status_detached == 0
    assert "fib(10) = 55" in out.splitlines() and "fib(10) = 55" in full.splitlines()
    entries = records(out, "uprobe:fib:fib")
    assert 0 < len(entries) < len(records(full, "uprobe:fib:fib")) == 177
    assert max(entries + records(out, "uretprobe:fib:fib")) <= 3000
    assert re.search(r"trapline: detached at 3000 \(asked at 3000\): \d+ PCs moved, [1-9]\d* return "
                     r"addresses rewritten, 1 patched sites restored, 1 tool areas unmapped", err)


def test_detach_on_a_signal():
    program = str(REPO / "samples" / "bin" / "x86_64" / "signals")
    status, full, _ = trace("-p", "uprobe:signals:check", program)
    status_detached, out, _ = trace("-p", "uprobe:signals:check", "--detach-on", "ALRM", program)
    assert status == status_detached == 0
    assert "signals: ok" in out.splitlines() and "signals: ok" in full.splitlines()
    assert 0 < len(records(out, "uprobe:signals:check")) < len(records(full, "uprobe:signals:check"))


def test_a_bad_signal_is_one_line():
    status, _, err = trace("-p", "uprobe:fib:fib", "--detach-on", "SIGFOO",
                           str(REPO / "samples" / "bin" / "x86_64" / "fib"))
    assert status == 2 and err.strip() == "trapline: --detach-on SIGFOO: no such signal (SIGUSR2, USR2, or 1..64)"
