"""emu/host_clock.py: the host clock in C stops a Unicorn run in progress when a tick is due
(after `period` of the process's CPU time: its thread marks it, the block hook on the Machine
stops the run at its next block), stops every run again while the tick is not taken, and hands
each due tick over once; closing it ends its thread. A guest spinning on `jmp $` runs until the
clock stops it, on both arches."""
import os
import time
import types

import pytest
from unicorn import UC_ARCH_X86, UC_MODE_32, UC_MODE_64, Uc

from emu import host_clock

CODE, SPIN = 0x10000, b"\xeb\xfe"          # jmp $: never ends by itself


def _spinning_machine(mode):
    uc = Uc(UC_ARCH_X86, mode)
    uc.mem_map(CODE, 0x1000)
    uc.mem_write(CODE, SPIN)
    return types.SimpleNamespace(uc=uc)


@pytest.fixture
def clock():
    ticker = host_clock.start(0.002)
    # gcc is on every machine trapline supports (the README's set-up needs it): a clock that
    # cannot be built is a failure to see, not a test to skip
    assert ticker is not None, host_clock.native.unavailable.get("host_clock")
    yield ticker
    ticker.close()


@pytest.mark.parametrize("mode", [UC_MODE_32, UC_MODE_64], ids=["i386", "x86_64"])
def test_a_due_tick_stops_the_spinning_run_and_is_taken_once(clock, mode):
    machine = _spinning_machine(mode)
    clock.running(machine)
    machine.uc.emu_start(CODE, CODE + 0x100)        # returns only when the clock stops it
    clock.idle()
    fired = clock.fired
    assert fired >= 1
    assert clock.take() is True
    # taken once: a second take finds nothing due, unless the clock fired again meanwhile (on a
    # loaded host its thread can wake late, past the next period of the process's CPU time)
    assert clock.take() is False or clock.fired > fired


@pytest.mark.parametrize("mode", [UC_MODE_32, UC_MODE_64], ids=["i386", "x86_64"])
def test_a_tick_not_taken_stops_the_next_run_too(clock, mode):
    machine = _spinning_machine(mode)
    clock.running(machine)
    machine.uc.emu_start(CODE, CODE + 0x100)
    fired = clock.fired
    machine.uc.emu_start(CODE, CODE + 0x100)        # the tick is still due: stopped again
    clock.idle()
    assert clock.fired == fired                     # by the tick still due, not a new one
    assert clock.take() is True


def test_the_clock_counts_the_process_cpu_time_and_closes():
    ticker = host_clock.start(10.0)                 # no tick in this test's time
    assert ticker is not None, host_clock.native.unavailable.get("host_clock")
    before = ticker.elapsed_ns()
    sum(range(200_000))
    assert ticker.elapsed_ns() > before >= 0
    assert ticker.fired == 0 and ticker.take() is False
    ticker.close()                                  # wakes the sleeping thread: no 10 s wait
    ticker.close()                                  # twice is harmless


def test_a_period_must_be_positive():
    with pytest.raises(ValueError):
        host_clock.start(0)


def _tasks() -> set[str]:
    return set(os.listdir("/proc/self/task"))


def _sleeps(tid: str) -> int:
    """Times the thread `tid` went to sleep (each wake-up after it costs the process CPU)."""
    with open(f"/proc/self/task/{tid}/status") as status:
        for line in status:
            if line.startswith("voluntary_ctxt_switches:"):
                return int(line.split()[1])
    raise AssertionError("no voluntary_ctxt_switches in /proc (Linux only)")


def test_between_runs_a_due_tick_waits_for_the_next_run_without_waking_the_thread():
    """Issue 31: with a tick due and no run under way (the kernel model's work between runs),
    the thread woke every RETRY_NS to find nothing to stop (each wake-up paid in the
    process's CPU); it now sleeps until the tick is taken, and the run that begins meanwhile
    is stopped by the block hook."""
    before = _tasks()
    ticker = host_clock.start(0.001)
    assert ticker is not None, host_clock.native.unavailable.get("host_clock")
    try:
        (tid,) = _tasks() - before
        deadline = time.process_time() + 0.05
        while ticker.fired == 0 and time.process_time() < deadline:
            pass                                    # CPU time for a tick, outside any run
        assert ticker.fired >= 1
        sleeps = _sleeps(tid)
        time.sleep(0.1)                             # the tick stays due: no run to stop
        assert _sleeps(tid) - sleeps <= 5
        machine = _spinning_machine(UC_MODE_64)
        ticker.running(machine)
        machine.uc.emu_start(CODE, CODE + 0x100)    # the due tick stops the run that begins
        ticker.idle()
        assert ticker.take() is True
    finally:
        ticker.close()


def test_a_tick_taken_between_runs_lets_the_clock_tick_on():
    """The thread that waits for a run while its tick is due must wake when the tick is taken
    between runs too: it waited for a run only, and the clock never ticked again."""
    ticker = host_clock.start(0.001)
    assert ticker is not None, host_clock.native.unavailable.get("host_clock")
    try:
        for tick in range(1, 4):
            _spin_until(lambda: ticker.fired >= tick)
            assert ticker.fired == tick             # (a tick not taken: no other one)
            time.sleep(0.01)                        # the thread finds the tick due, no run
            assert ticker.take() is True            # taken between runs
    finally:
        ticker.close()


def _spin_until(done, cpu_s: float = 0.5) -> None:
    """Use CPU time (what the clock counts) outside any run until `done()` or `cpu_s`."""
    deadline = time.process_time() + cpu_s
    while not done() and time.process_time() < deadline:
        pass
