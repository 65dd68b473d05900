"""sched_{set,get}scheduler, sched_{set,get}param and the priority ranges, for a task without
CAP_SYS_NICE and for root, which holds it (kernel/sched/core.c); the reset-on-fork flag through
fork."""
import struct

from kernel_model import errno as E

from ...call_script import run_script
from .without_cap import drop

CAP_SYS_NICE = 23

NORMAL, FIFO, RR, BATCH, IDLE, DEADLINE = 0, 1, 2, 3, 5, 6
RESET_ON_FORK = 0x40000000
RLIMIT_RTPRIO = 14


def prio(*values: int) -> bytes:
    return b"".join(struct.pack("<i", v) for v in values)


def test_priority_ranges(arch):
    calls = [(f"sched_get_priority_{end}", policy) for policy in (NORMAL, FIFO, RR, BATCH, IDLE,
                                                                   DEADLINE, 4, 7, -1)
             for end in ("max", "min")]
    results, _, _ = run_script(arch, calls)
    assert results == [0, 0, 99, 1, 99, 1, 0, 0, 0, 0, 0, 0] + [-E.EINVAL] * 6


def test_policies_without_cap_sys_nice(arch):
    capset, data = drop(CAP_SYS_NICE, prio(0, 1, 100, 77))
    results, buf, _ = run_script(arch, [
        capset, ("sched_getscheduler", 0), ("sched_setscheduler", 0, BATCH, "BUF"),
        ("sched_getscheduler", 0), ("sched_setscheduler", 0, FIFO, "BUF+4"),
        ("sched_setscheduler", 0, NORMAL, "BUF+4"), ("sched_setscheduler", 0, DEADLINE, "BUF"),
        ("sched_setscheduler", 0, 4, "BUF"), ("sched_setscheduler", 0, -1, "BUF"),
        ("sched_setscheduler", 0, NORMAL, 0), ("sched_setscheduler", -1, NORMAL, "BUF"),
        ("sched_setscheduler", 4242, NORMAL, "BUF"), ("sched_setscheduler", 1, NORMAL, "BUF"),
        ("sched_setscheduler", 0, FIFO, "BUF+8"), ("sched_setscheduler", 0, NORMAL, 0x10),
        ("sched_getparam", 0, "BUF+12"), ("sched_getparam", 0, 0), ("sched_getparam", 0, "RO"),
        ("sched_setparam", 0, "BUF"), ("sched_getscheduler", -3), ("sched_getscheduler", 4242)],
        data=data)
    assert results == [0, 0, 0, BATCH, -E.EPERM, -E.EINVAL, -E.EINVAL, -E.EINVAL, -E.EINVAL,
                       -E.EINVAL, -E.EINVAL, -E.ESRCH, -E.EPERM, -E.EINVAL, -E.EFAULT,
                       0, -E.EINVAL, -E.EFAULT, 0, -E.EINVAL, -E.ESRCH]
    assert struct.unpack_from("<i", buf, 12)[0] == 0


def test_rlimit_rtprio_allows_real_time_policies(arch):
    limit = struct.pack("<QQ", 10, 10)
    capset, data = drop(CAP_SYS_NICE, prio(10, 11, 0, 0) + limit)
    results, _, _ = run_script(arch, [
        capset, ("prlimit64", 0, RLIMIT_RTPRIO, "BUF+16", 0), ("sched_setscheduler", 0, RR, "BUF"),
        ("sched_getscheduler", 0), ("sched_getparam", 0, "BUF+32"),
        ("sched_setscheduler", 0, FIFO, "BUF+4")],
        data=data)
    assert results == [0, 0, 0, RR, 0, -E.EPERM]


def test_root_sets_real_time_policies_and_clears_reset_on_fork(arch):
    """CAP_SYS_NICE: no RLIMIT_RTPRIO needed (LTP sched_setscheduler and nice tests as root)."""
    results, _, _ = run_script(arch, [
        ("sched_setscheduler", 0, FIFO, "BUF+4"), ("sched_getscheduler", 0),
        ("sched_getparam", 0, "BUF+32"), ("sched_setscheduler", 0, RR | RESET_ON_FORK, "BUF+8"),
        ("sched_setscheduler", 0, IDLE, "BUF"), ("sched_setscheduler", 0, NORMAL, "BUF"),
        ("sched_getscheduler", 0)], data=prio(0, 1, 99))
    assert results == [0, FIFO, 0, 0, 0, 0, NORMAL]


def test_reset_on_fork_is_kept_and_cleared_in_the_child(arch):
    capset, data = drop(CAP_SYS_NICE, prio(0))
    results, _, kernel = run_script(arch, [
        capset, ("sched_setscheduler", 0, BATCH | RESET_ON_FORK, "BUF"), ("sched_getscheduler", 0),
        ("sched_setscheduler", 0, BATCH, "BUF"), ("fork",), ("sched_getscheduler", 101)],
        data=data)
    assert results[:4] == [0, 0, BATCH | RESET_ON_FORK, -E.EPERM]
    assert results[5] == BATCH                # sched_fork: the child keeps BATCH, not the flag
    assert kernel.next_pid == 102


def test_another_owner_s_task_is_eperm_only_after_the_values_are_checked(arch):
    """__sched_setscheduler checks the policy and priority before the permission: pid 1 with an
    unknown policy is EINVAL (LTP sched_setscheduler01 got EPERM), with a valid one EPERM."""
    results, _, _ = run_script(arch, [
        ("sched_setscheduler", 1, 99, "BUF"),
        ("sched_setscheduler", 1, 0, "BUF"),
        ("sched_setparam", 1, "BUF+8"),
    ], data=b"\0" * 8 + b"\x05\0\0\0")
    assert results == [-E.EINVAL, -E.EPERM, -E.EINVAL]
