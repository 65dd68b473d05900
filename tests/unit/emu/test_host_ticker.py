"""emu/host_ticker.py: the host clock marks a tick due after `period` of the process's CPU
time and the run in progress stops at its next block's start (a block hook, never the clock's
thread: emu/block_stop.py), so the guest's read-modify-write loop keeps its two counters equal;
`take()` hands each due tick over once. Both arches, the block hook in Python as where C cannot
be built."""
import time

import pytest
from unicorn import UC_MODE_32, UC_MODE_64

from emu import block_stop
from emu.host_ticker import HostTicker
from tests.unit.emu.block_stop_guest import CODE, counters, looping_machine, pc


def _burn_until(done, limit_s: float = 60.0) -> None:
    """Use CPU (the clock counts the process's CPU time) until done() or the limit."""
    end = time.monotonic() + limit_s
    while not done() and time.monotonic() < end:
        sum(range(1000))


@pytest.mark.parametrize("mode", [UC_MODE_32, UC_MODE_64], ids=["i386", "x86_64"])
def test_due_ticks_stop_the_run_at_a_block_start_and_are_taken_once(mode, monkeypatch):
    monkeypatch.setattr(block_stop, "_library", lambda: None)      # as where C cannot be built
    ticker = HostTicker(0.001)
    machine = looping_machine(mode)
    try:
        for _ in range(20):                  # each run spins until a tick stops it
            ticker.running(machine)
            machine.uc.emu_start(pc(machine, mode), CODE + 0x100)
            ticker.idle()
            assert pc(machine, mode) == CODE
            assert ticker.take() is True
        fired = ticker.fired
        assert ticker.take() is False or ticker.fired > fired   # (a loaded host: a late tick)
    finally:
        ticker.close()
    memory, ecx = counters(machine)
    assert ecx > 0 and memory == ecx                            # no add ran twice


def test_a_tick_due_between_runs_waits_to_be_taken_and_the_thread_ends_on_close():
    ticker = HostTicker(0.001)
    try:
        _burn_until(lambda: ticker.fired >= 1)              # no Machine runs: nothing to stop
        assert ticker.fired >= 1 and ticker.take() is True
    finally:
        ticker.close()
    assert not ticker._thread.is_alive()
