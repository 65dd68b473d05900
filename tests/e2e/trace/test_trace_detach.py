"""`trapline trace --detach-after N` and `--detach-on SIGNAL` (trapline/cli/detach.py): the
records stop at the detach and the program runs on to its normal end with its native output."""
import re

import pytest

from tests.e2e.forkserver import run_trapline
from tests.e2e.gdb_client import REPO

pytestmark = pytest.mark.e2e


def trace(*argv):
    done = run_trapline(["trace", *argv], timeout=300)
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
    # Detach waits for the first point at or after 3000 where no thread is inside the tool's
    # code; where that is depends on the instructions run before, which include those reading
    # argv (the program's path, so the checkout's folder): at 3000 here, 3001 in another folder.
    found = re.search(r"trapline: detached at (\d+) \(asked at 3000\): \d+ PCs moved, [1-9]\d* return "
                      r"addresses rewritten, 1 patched sites restored, 1 tool areas unmapped", err)
    assert found, err
    detached_at = int(found.group(1))
    assert 3000 <= detached_at < 3100
    assert max(entries + records(out, "uretprobe:fib:fib")) <= detached_at


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
