"""Threads under gdb beyond `info threads`: the thread list with names (qXfer:threads:read),
`set scheduler-locking on|step` (vCont actions for some threads only: the others stay
stopped, GDB manual "Packets", vCont), `stepi` in one thread while the others keep their
PCs, and a program that then waits for a held thread (the barrier in samples/threads.c) hangs
as under gdbserver until Ctrl-C. On both arches, samples/bin/*/threads (4 threads)."""
import re

import pytest

from tests.e2e.gdb_batch import gdb_batch, sample

ARCHES = ("x86_64", "i386")


def thread_rows(listing: str) -> dict[int, str]:
    """`info threads`: gdb's thread number -> its frame text."""
    rows = {}
    for line in listing.splitlines():
        found = re.match(r"[* ] +(\d+) +Thread \d+\.\d+ \"threads\" (.*)", line)
        if found:
            rows[int(found.group(1))] = found.group(2)
    return rows


def listings(out: str) -> list[dict[int, str]]:
    parts = out.split("  Id   Target Id")
    return [thread_rows(part.split("\n\n")[0]) for part in parts[1:]]


@pytest.mark.parametrize("arch", ARCHES)
def test_scheduler_locking_on_runs_only_the_chosen_thread(arch):
    out = gdb_batch(sample(arch, "threads"), [
        "break worker", "continue", "set scheduler-locking on", "thread 4", "continue",
        "info threads", "stepi", "info threads", "set scheduler-locking off", "delete",
        "continue"])
    assert 'Thread 2 "threads" hit Breakpoint 1, ' in out
    assert 'Thread 4 "threads" hit Breakpoint 1, ' in out        # it alone ran on
    before, after = listings(out)
    assert len(before) == 5 and "in worker ()" in before[2] and "in worker ()" in before[4]
    assert "__clone" in before[3] and "__clone" in before[5]     # held: never ran
    assert [after[n] for n in (1, 2, 3, 5)] == [before[n] for n in (1, 2, 3, 5)]
    assert after[4] != before[4]                                 # the stepi moved thread 4 only
    assert "threads: ok" in out and "[Inferior 1 (process 100) exited normally]" in out


@pytest.mark.parametrize("arch", ARCHES)
def test_stepi_with_scheduler_locking_step(arch):
    out = gdb_batch(sample(arch, "threads"), [
        "break worker", "continue", "info threads", "set scheduler-locking step", "stepi",
        "stepi", "info threads", "delete", "continue"])
    before, after = listings(out)
    assert [after[n] for n in (1, 3, 4, 5)] == [before[n] for n in (1, 3, 4, 5)]
    assert after[2] != before[2] and "in worker ()" in after[2]
    assert "threads: ok" in out


@pytest.mark.parametrize("arch", ARCHES)
def test_a_held_thread_blocks_the_others_until_ctrl_c(arch):
    """Thread 2 waits at the barrier for threads gdb keeps stopped: nothing can run, and the
    program waits for its user (no deadlock report); Ctrl-C stops it in thread 2."""
    out = gdb_batch(sample(arch, "threads"), [
        "break worker", "continue", "set scheduler-locking on", "delete", "echo waiting\\n",
        "continue", "info threads", "set scheduler-locking off", "continue"],
        interrupt_at="waiting")
    assert 'Thread 2 "threads" received signal SIGINT, Interrupt.' in out
    assert "deadlock" not in out
    assert "threads: ok" in out and "[Inferior 1 (process 100) exited normally]" in out
