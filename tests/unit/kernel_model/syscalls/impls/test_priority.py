"""getpriority/setpriority and ioprio_get/ioprio_set: values per task, inherited by fork, the
answers of a task without CAP_SYS_NICE and of root, which holds it (kernel/sys.c,
block/ioprio.c)."""
from kernel_model import errno as E

from ...call_script import run_script
from .without_cap import drop

CAP_SYS_NICE, CAP_SYS_ADMIN = 23, 21

PRIO_PROCESS, PRIO_PGRP, PRIO_USER = 0, 1, 2
WHO_PROCESS, WHO_PGRP, WHO_USER = 1, 2, 3
RLIMIT_NICE = 13


def be(level: int) -> int:
    return 2 << 13 | level


def test_nice_goes_up_freely_and_comes_down_only_within_rlimit_nice(arch):
    capset, data = drop(CAP_SYS_NICE)
    results, _, _ = run_script(arch, [
        capset, ("getpriority", PRIO_PROCESS, 0),
        ("setpriority", PRIO_PROCESS, 0, 5), ("getpriority", PRIO_PROCESS, 0),
        ("setpriority", PRIO_PROCESS, 0, 100), ("getpriority", PRIO_PGRP, 0),   # clamped to 19
        ("setpriority", PRIO_PROCESS, 0, 10),                 # lower than 19: RLIMIT_NICE is 0
        ("setpriority", PRIO_USER, 0, 19), ("getpriority", PRIO_USER, 0),
        ("setpriority", PRIO_PROCESS, 0, -100)], data=data)
    assert results == [0, 20, 0, 15, 0, 1, -E.EACCES, 0, 1, -E.EACCES]


def test_root_lowers_nice_to_the_minimum(arch):
    """can_nice() with CAP_SYS_NICE (LTP nice01: nice(-12) as root was EPERM)."""
    results, _, _ = run_script(arch, [
        ("setpriority", PRIO_PROCESS, 0, 19), ("setpriority", PRIO_PROCESS, 0, -12),
        ("getpriority", PRIO_PROCESS, 0), ("setpriority", PRIO_PROCESS, 0, -100),
        ("getpriority", PRIO_PROCESS, 0)])
    assert results == [0, 0, 32, 0, 40]


def test_rlimit_nice_allows_lowering(arch):
    limit = bytes(16)
    results, _, _ = run_script(arch, [
        ("setpriority", PRIO_PROCESS, 0, 10), ("prlimit64", 0, RLIMIT_NICE, "BUF", 0),
        ("setpriority", PRIO_PROCESS, 0, 0), ("getpriority", PRIO_PROCESS, 0),
        ("setpriority", PRIO_PROCESS, 0, -1)],
        data=(30).to_bytes(8, "little") * 2 + limit)        # rlim_cur = rlim_max = 30: nice >= -10
    assert results == [0, 0, 0, 20, 0]


def test_who_and_which(arch):
    results, _, _ = run_script(arch, [
        ("getpriority", 3, 0), ("setpriority", -1, 0, 0), ("getpriority", PRIO_PROCESS, 4242),
        ("getpriority", PRIO_PROCESS, 100), ("getpriority", PRIO_PROCESS, 1),
        ("setpriority", PRIO_PROCESS, 1, 5), ("getpriority", PRIO_USER, 1000),
        ("getpriority", PRIO_PGRP, 4242), ("setpriority", PRIO_PGRP, 4242, 1)])
    assert results == [-E.EINVAL, -E.EINVAL, -E.ESRCH, 20, 20, -E.EPERM, -E.ESRCH, -E.ESRCH,
                       -E.ESRCH]


def test_a_forked_child_inherits_its_nice_value(arch):
    # parent and child both run the rest of the script; whichever writes its results first,
    # it reads nice 7 (the child's through sched_fork's copy), and the child's fork() is 0
    results, _, kernel = run_script(arch, [
        ("setpriority", PRIO_PROCESS, 0, 7), ("fork",), ("getpriority", PRIO_PROCESS, 0),
        ("getpriority", PRIO_PROCESS, 101)])                # the child's pid
    assert results[0] == 0 and results[2] == 13 and results[3] == 13
    assert kernel.next_pid == 102


def test_ioprio(arch):
    capset, data = drop((CAP_SYS_NICE, CAP_SYS_ADMIN))
    results, _, _ = run_script(arch, [
        capset, ("ioprio_get", WHO_PROCESS, 0), ("ioprio_set", WHO_PROCESS, 0, be(7)),
        ("ioprio_get", WHO_PROCESS, 0), ("ioprio_get", WHO_PGRP, 0),
        ("ioprio_set", WHO_PROCESS, 0, be(8)), ("ioprio_set", WHO_PROCESS, 0, 1 << 13 | 4),
        ("ioprio_set", WHO_PROCESS, 0, 3 << 13 | 0x1FFF), ("ioprio_get", WHO_USER, 0),
        ("ioprio_set", WHO_PROCESS, 0, 5), ("ioprio_set", WHO_PROCESS, 0, 4 << 13),
        ("ioprio_set", 0, 0, be(1)), ("ioprio_get", 4, 0), ("ioprio_get", WHO_PROCESS, 4242),
        ("ioprio_set", WHO_PROCESS, 1, be(1)), ("ioprio_get", WHO_USER, 7),
        ("ioprio_set", WHO_PROCESS, 0, 0x10000)], data=data)
    assert results == [0, 0, 0, be(7), be(7), -E.EINVAL, -E.EPERM, 0, 3 << 13 | 0x1FFF,
                       -E.EINVAL, -E.EINVAL, -E.EINVAL, -E.EINVAL, -E.ESRCH, -E.EPERM, -E.ESRCH,
                       0]


def test_the_real_time_io_class_needs_cap_sys_nice_or_cap_sys_admin(arch):
    """ioprio_check_cap of Linux 6.1: root holds both; without one the other suffices."""
    rt = 1 << 13 | 4
    for dropped in (CAP_SYS_NICE, CAP_SYS_ADMIN):
        capset, data = drop(dropped)
        results, _, _ = run_script(arch, [capset, ("ioprio_set", WHO_PROCESS, 0, rt),
                                          ("ioprio_get", WHO_PROCESS, 0)], data=data)
        assert results == [0, 0, rt]
    results, _, _ = run_script(arch, [("ioprio_set", WHO_PROCESS, 0, rt)])
    assert results == [0]
