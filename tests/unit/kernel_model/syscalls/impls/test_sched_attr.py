"""sched_setattr/sched_getattr (ENOSYS before; LTP sched_getattr02, sched_setattr01's error
cases): the struct's size rules, EINVAL/ESRCH in kernel/sched/core.c's order, a fair policy's
nice value and SCHED_BATCH set and read back, SCHED_DEADLINE refused without CAP_SYS_NICE
(EPERM, as for sched_setscheduler) and, for root, set with its parameters read back, checked
(__checkparam_dl: EINVAL) and admitted within the CPU's 95 % (sched_dl_overflow: EBUSY); LTP
sched_getattr01 and sched_setattr01 were EPERM."""
import struct

import pytest

from kernel_model import errno as E

from ...call_script import run_script
from .without_cap import drop

SCHED_BATCH, SCHED_DEADLINE = 3, 6
NO_PID = 0x7FFF_0000
CAP_SYS_NICE = 23


def attr(policy: int, nice: int = 0, size: int = 48, priority: int = 0,
         dl=(10**7, 3 * 10**7, 3 * 10**7)) -> bytes:
    return struct.pack("<IIQiIQQQ", size, policy, 0, nice, priority, *dl)


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_set_and_get(arch):
    data = attr(SCHED_BATCH, nice=5).ljust(64, b"\0") + attr(SCHED_DEADLINE).ljust(64, b"\0") \
        + attr(0, size=30).ljust(64, b"\0") + attr(0, size=64) + b"\0" * 8 + b"\1" + b"\0" * 7
    capset, data = drop(CAP_SYS_NICE, data)
    results, buf, _ = run_script(arch, [
        capset, ("sched_setattr", 0, "BUF", 0),
        ("sched_getattr", 0, "BUF+512", 56, 0),
        ("sched_setattr", 0, "BUF+64", 0),            # SCHED_DEADLINE: EPERM
        ("sched_setattr", NO_PID, "BUF", 0),          # ESRCH
        ("sched_setattr", 0, 0, 0),                   # no struct
        ("sched_setattr", 0, "BUF", 1000),            # flags
        ("sched_setattr", 0, "BUF+128", 0),           # size 30: E2BIG, 56 written back
        ("sched_getattr", 0, "BUF+600", 47, 0),       # size below VER0
        ("sched_getattr", NO_PID, "BUF+600", 56, 0),
        ("sched_getattr", 0, "BUF+600", 56, 1000)], data=data)
    assert results == [0, 0, 0, -E.EPERM, -E.ESRCH, -E.EINVAL, -E.EINVAL, -E.E2BIG, -E.EINVAL,
                       -E.ESRCH, -E.EINVAL]
    size, policy, flags, nice, priority = struct.unpack_from("<IIQiI", buf, 512)
    assert (size, policy, flags, nice, priority) == (56, SCHED_BATCH, 0, 5, 0)
    assert struct.unpack_from("<I", buf, 128)[0] == 56


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_root_sets_a_deadline_task_within_the_bandwidth(arch):
    data = b"".join(a.ljust(64, b"\0") for a in (
        attr(SCHED_DEADLINE),                                      # 10 ms of 30 ms
        attr(SCHED_DEADLINE, dl=(10**7, 3 * 10**7, 0)),            # the period is the deadline
        attr(SCHED_DEADLINE, dl=(10**7, 3 * 10**7, 2 * 10**7)),    # period < deadline
        attr(SCHED_DEADLINE, dl=(1000, 3 * 10**7, 3 * 10**7)),     # runtime < 1024 ns
        attr(SCHED_DEADLINE, dl=(10**7, 10**7, 10**7)),            # 100 %: past 95 %
        attr(SCHED_DEADLINE, priority=1),
        attr(SCHED_BATCH)))
    results, buf, _ = run_script(arch, [
        ("sched_setattr", 0, "BUF", 0), ("sched_getattr", 0, "BUF+512", 56, 0),
        ("sched_setattr", 0, "BUF+64", 0), ("sched_getattr", 0, "BUF+576", 56, 0),
        ("sched_setattr", 0, "BUF+128", 0), ("sched_setattr", 0, "BUF+192", 0),
        ("sched_setattr", 0, "BUF+256", 0), ("sched_setattr", 0, "BUF+320", 0),
        ("sched_setattr", 0, "BUF+384", 0), ("sched_getattr", 0, "BUF+640", 56, 0)], data=data)
    assert results == [0, 0, 0, 0, -E.EINVAL, -E.EINVAL, -E.EBUSY, -E.EINVAL, 0, 0]
    read_back = [struct.unpack_from("<IIQiIQQQ", buf, at) for at in (512, 576, 640)]
    assert read_back[0][1:] == (SCHED_DEADLINE, 0, 0, 0, 10**7, 3 * 10**7, 3 * 10**7)
    assert read_back[1][5:] == (10**7, 3 * 10**7, 3 * 10**7)
    assert read_back[2][1] == SCHED_BATCH and read_back[2][5:] == (0, 0, 0)
