"""sched_setattr/sched_getattr (ENOSYS before; LTP sched_getattr02, sched_setattr01's error
cases): the struct's size rules, EINVAL/ESRCH in kernel/sched/core.c's order, a fair policy's
nice value and SCHED_BATCH set and read back, SCHED_DEADLINE refused (EPERM: the sandbox's root
has no CAP_SYS_NICE, as for sched_setscheduler)."""
import struct

import pytest

from kernel_model import errno as E

from ...call_script import run_script

SCHED_BATCH, SCHED_DEADLINE = 3, 6
NO_PID = 0x7FFF_0000


def attr(policy: int, nice: int = 0, size: int = 48, priority: int = 0) -> bytes:
    return struct.pack("<IIQiIQQQ", size, policy, 0, nice, priority, 10**7, 3 * 10**7, 3 * 10**7)


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_set_and_get(arch):
    data = attr(SCHED_BATCH, nice=5).ljust(64, b"\0") + attr(SCHED_DEADLINE).ljust(64, b"\0") \
        + attr(0, size=30).ljust(64, b"\0") + attr(0, size=64) + b"\0" * 8 + b"\1" + b"\0" * 7
    results, buf, _ = run_script(arch, [
        ("sched_setattr", 0, "BUF", 0),
        ("sched_getattr", 0, "BUF+512", 56, 0),
        ("sched_setattr", 0, "BUF+64", 0),            # SCHED_DEADLINE: EPERM
        ("sched_setattr", NO_PID, "BUF", 0),          # ESRCH
        ("sched_setattr", 0, 0, 0),                   # no struct
        ("sched_setattr", 0, "BUF", 1000),            # flags
        ("sched_setattr", 0, "BUF+128", 0),           # size 30: E2BIG, 56 written back
        ("sched_getattr", 0, "BUF+600", 47, 0),       # size below VER0
        ("sched_getattr", NO_PID, "BUF+600", 56, 0),
        ("sched_getattr", 0, "BUF+600", 56, 1000)], data=data)
    assert results == [0, 0, -E.EPERM, -E.ESRCH, -E.EINVAL, -E.EINVAL, -E.E2BIG, -E.EINVAL,
                       -E.ESRCH, -E.EINVAL]
    size, policy, flags, nice, priority = struct.unpack_from("<IIQiI", buf, 512)
    assert (size, policy, flags, nice, priority) == (56, SCHED_BATCH, 0, 5, 0)
    assert struct.unpack_from("<I", buf, 128)[0] == 56
