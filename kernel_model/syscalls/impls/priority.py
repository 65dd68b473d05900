"""Scheduling and I/O priorities: getpriority/setpriority (kernel/sys.c) and
ioprio_get/ioprio_set (block/ioprio.c, Linux 6.1 as uname reports).

Each thread has a nice value (-20..19) and an I/O priority (Thread.nice, Thread.ioprio), both
inherited at fork and clone. Nothing is scheduled by them — the modeled scheduler is
round-robin — but every guest sees what it set, and the errors Linux gives.

Privileges (creds.py's model): root holds CAP_SYS_NICE, so it may lower a nice value and use
the real-time I/O class; a task without it (a root that set its euid to another, a user)
lowers a nice value only within RLIMIT_NICE (can_nice(); its default is 0, so EACCES) and gets
EPERM for the real-time class (ioprio_check_cap: CAP_SYS_NICE or CAP_SYS_ADMIN). Pid 1 is the
sandbox's virtual init: it is seen (nice 0, no I/O priority) but belongs to the sandbox, so
changing it is EPERM, as for a task of another user. PRIO_USER and IOPRIO_WHO_USER name the
tasks whose real uid is `who` (0: the caller's real uid); none is ESRCH. Another task may be
changed by a caller whose effective uid is its real or effective uid, or that holds
CAP_SYS_NICE (set_one_prio_perm), else EPERM.

getpriority returns 20 - nice (1..40) so that no result looks like an error; the C library
turns it back into a nice value.
"""
from ... import errno as E
from ...pid_namespace import global_pid
from ...creds import CAP_SYS_ADMIN
from ...errno import GuestErrno
from ...sched_owner import CAP_SYS_NICE
from ...process.proc import INIT_PID
from ..kinds import K
from ..registry import syscall
from .process import DEFAULT_RLIMITS, RLIMIT_NICE

PRIO_PROCESS, PRIO_PGRP, PRIO_USER = 0, 1, 2
IOPRIO_WHO_PROCESS, IOPRIO_WHO_PGRP, IOPRIO_WHO_USER = 1, 2, 3
MIN_NICE, MAX_NICE = -20, 19
IOPRIO_CLASS_SHIFT = 13
IOPRIO_CLASS_NONE, IOPRIO_CLASS_RT, IOPRIO_CLASS_BE, IOPRIO_CLASS_IDLE = 0, 1, 2, 3
IOPRIO_NR_LEVELS = 8
INIT = "init"               # stands for the virtual init among the tasks a call names


def _live_threads(ctx):
    """Every guest task still in the pid table (zombies until reaped), in pid order."""
    for proc in sorted(ctx.kernel.processes.values(), key=lambda p: p.pid):
        yield from proc.threads


def tasks(ctx, which: int, who: int, process: int, group: int, user: int) -> list:
    """The tasks (threads, or INIT) `which`/`who` name; `process`, `group`, `user` are this
    call's codes for the three kinds. EINVAL for another `which`."""
    who = ctx.int32(who)
    if which == process:
        if who == 0:
            return [ctx.thread]
        who = global_pid(ctx.proc, who)         # numbers of the caller's pid namespace
        if who == INIT_PID:
            return [INIT]
        return [t for t in _live_threads(ctx) if t.tid == who][:1]
    if which == group:
        pgid = ctx.proc.pgid if who == 0 else global_pid(ctx.proc, who)
        return [t for t in _live_threads(ctx) if t.process.pgid == pgid]
    if which == user:
        uid = ctx.proc.creds.uid if who == 0 else who & 0xFFFFFFFF
        return [t for t in _live_threads(ctx) if t.process.creds.uid == uid]
    raise GuestErrno(E.EINVAL)


def _nice_of(task) -> int:
    return 0 if task is INIT else task.nice


@syscall("getpriority", args=(("which", K.INT), ("who", K.INT)))
def sys_getpriority(ctx, which, who):
    found = tasks(ctx, ctx.int32(which), who, PRIO_PROCESS, PRIO_PGRP, PRIO_USER)
    if not found:
        raise GuestErrno(E.ESRCH)
    return max(20 - _nice_of(t) for t in found)            # nice_to_rlimit(): 1..40


def _set_one_prio(ctx, task, nice: int, error: int) -> int:
    """kernel/sys.c set_one_prio(): the task's own error replaces the running one; a success
    only clears the initial ESRCH."""
    if task is INIT or not _may_set_prio(ctx.proc.creds, task.process.creds):
        return E.EPERM
    if nice < task.nice and not _can_nice(ctx, task, nice):
        return E.EACCES
    task.nice = nice
    return 0 if error == E.ESRCH else error


def _may_set_prio(caller, target) -> bool:
    """kernel/sys.c set_one_prio_perm()."""
    return caller.euid in (target.uid, target.euid) or caller.capable(CAP_SYS_NICE)


def _can_nice(ctx, task, nice: int) -> bool:
    """kernel/sched/core.c can_nice(): within RLIMIT_NICE (is_nice_reduction), or
    CAP_SYS_NICE."""
    return 20 - nice <= _rlimit_nice(ctx, task) or ctx.proc.creds.capable(CAP_SYS_NICE)


def _rlimit_nice(ctx, task) -> int:
    """task_rlimit(p, RLIMIT_NICE): the soft limit of the task's process."""
    return task.process.rlimits.get(RLIMIT_NICE, DEFAULT_RLIMITS[RLIMIT_NICE])[0]


@syscall("setpriority", args=(("which", K.INT), ("who", K.INT), ("prio", K.INT)))
def sys_setpriority(ctx, which, who, niceval):
    found = tasks(ctx, ctx.int32(which), who, PRIO_PROCESS, PRIO_PGRP, PRIO_USER)
    nice = min(max(ctx.int32(niceval), MIN_NICE), MAX_NICE)
    error = E.ESRCH
    for task in found:
        error = _set_one_prio(ctx, task, nice, error)
    if error:
        raise GuestErrno(error)
    return 0


def check_ioprio(ctx, ioprio: int) -> None:
    """ioprio_check_cap() of Linux 6.1: class in bits 13-15, data in bits 0-12."""
    klass, data = (ioprio >> IOPRIO_CLASS_SHIFT) & 7, ioprio & 0x1FFF
    creds = ctx.proc.creds
    if klass == IOPRIO_CLASS_RT and not (creds.capable(CAP_SYS_NICE) or creds.capable(CAP_SYS_ADMIN)):
        raise GuestErrno(E.EPERM)
    if klass in (IOPRIO_CLASS_RT, IOPRIO_CLASS_BE) and data >= IOPRIO_NR_LEVELS:
        raise GuestErrno(E.EINVAL)                # (rt has a level too: the switch falls through)
    if klass == IOPRIO_CLASS_NONE and data:
        raise GuestErrno(E.EINVAL)
    if klass not in (IOPRIO_CLASS_RT, IOPRIO_CLASS_BE, IOPRIO_CLASS_IDLE, IOPRIO_CLASS_NONE):
        raise GuestErrno(E.EINVAL)


@syscall("ioprio_set", args=(("which", K.INT), ("who", K.INT), ("ioprio", K.HEX)))
def sys_ioprio_set(ctx, which, who, ioprio):
    ioprio = ctx.int32(ioprio)
    check_ioprio(ctx, ioprio)
    found = tasks(ctx, ctx.int32(which), who, IOPRIO_WHO_PROCESS, IOPRIO_WHO_PGRP,
                  IOPRIO_WHO_USER)
    if not found:
        raise GuestErrno(E.ESRCH)
    caller = ctx.proc.creds
    for task in found:                            # set_task_ioprio(); the first error stops
        if task is INIT or not (task.process.creds.uid in (caller.euid, caller.uid)
                                or caller.capable(CAP_SYS_NICE)):
            raise GuestErrno(E.EPERM)
        task.ioprio = ioprio & 0xFFFF             # io_context's unsigned short
    return 0


@syscall("ioprio_get", args=(("which", K.INT), ("who", K.INT)))
def sys_ioprio_get(ctx, which, who):
    found = tasks(ctx, ctx.int32(which), who, IOPRIO_WHO_PROCESS, IOPRIO_WHO_PGRP,
                  IOPRIO_WHO_USER)
    if not found:
        raise GuestErrno(E.ESRCH)
    # ioprio_best() of Linux 6.1: with IOPRIO_DEFAULT the class NONE, the lowest value
    return min(0 if t is INIT else t.ioprio for t in found)
