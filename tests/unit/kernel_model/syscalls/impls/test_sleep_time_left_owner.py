"""The time left of an interrupted sleep is written into the sleeper's memory, whoever made
the last call. The dispatcher's one context per ABI is rebound to every call
(SyscallContext.bind), and the sleep kept it for the write made at delivery: LTP kill12's
parent, its sleep ended by its child's SIGCHLD, wrote its time left into the child (the last
caller), over the stack protector's canary of the child's own sleep() ("*** stack smashing
detected ***"); kill02's SIGSEGV had the same cause."""
import struct

import pytest

from kernel_model.blocking import WouldBlock
from kernel_model.signals.delivery import INTERRUPT_KEY
from kernel_model.syscalls.impls.timecalls import sys_clock_nanosleep, sys_nanosleep

from .fakectx import BASE, fake_ctx

REQ, REM = BASE, BASE + 0x100
UNTOUCHED = b"\xaa" * 16


def two_processes(abi: str):
    """A context bound to a sleeper, and a second process's context over other memory."""
    sleeper, other = fake_ctx(abi), fake_ctx(abi)
    other.kernel = sleeper.kernel                 # one kernel, one clock
    sleeper.thread.tid, other.thread.tid = 100, 101
    fmt = "<qq" if abi == "x86_64" else "<ii"
    sleeper.write(REQ, struct.pack(fmt, 60, 0))
    for ctx in (sleeper, other):
        ctx.write(REM, UNTOUCHED)
    return sleeper, other, fmt


@pytest.mark.parametrize("abi", ["i386", "x86_64"])
@pytest.mark.parametrize("call", ["nanosleep", "clock_nanosleep"])
def test_time_left_goes_to_the_sleeper_after_another_process_called(abi, call):
    shared, other, fmt = two_processes(abi)
    sleeper_thread, sleeper_mem = shared.thread, shared.mem
    with pytest.raises(WouldBlock):
        if call == "nanosleep":
            sys_nanosleep(shared, REQ, REM)
        else:
            sys_clock_nanosleep(shared, 0, 0, REQ, REM)
    clock = shared.kernel.clock
    clock.advance(15 * 10**9)                     # the signal comes 15 s later
    shared.bind(other.thread, None)               # the next call is the other process's
    assert sleeper_thread.restart[INTERRUPT_KEY]() is None
    sec, nsec = struct.unpack(fmt, sleeper_mem.read(REM, struct.calcsize(fmt)))
    expected = sleeper_thread.restart["deadline"] - clock.monotonic_ns()
    assert 44 * 10**9 < expected and sec * 10**9 + nsec == expected
    assert other.mem.read(REM, 16) == UNTOUCHED
