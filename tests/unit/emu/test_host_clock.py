"""emu/host_clock.py: the host clock's thread in C stops a Unicorn run in progress when a tick is
due (after `period` of the process's CPU time), stops it again while the tick is not taken (a
stop asked just before a run begins is lost), and hands each due tick over once; closing it ends
its thread. A guest spinning on `jmp $` runs until the clock stops it, on both arches."""
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
    assert clock.fired >= 1
    assert clock.take() is True and clock.take() is False


@pytest.mark.parametrize("mode", [UC_MODE_32, UC_MODE_64], ids=["i386", "x86_64"])
def test_a_tick_not_taken_stops_the_next_run_too(clock, mode):
    machine = _spinning_machine(mode)
    clock.running(machine)
    machine.uc.emu_start(CODE, CODE + 0x100)
    fired = clock.fired
    machine.uc.emu_start(CODE, CODE + 0x100)        # the tick is still due: stopped again
    clock.idle()
    assert clock.fired == fired                     # by the retry, not by a new tick
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
