"""Scheduling policies: sched_setscheduler, sched_getscheduler, sched_setparam,
sched_getparam, sched_get_priority_max/min (kernel/sched/core.c, Linux 6.1).

Each thread keeps its policy (Thread.sched_policy, SCHED_RESET_ON_FORK included) and real-time
priority; fork and clone pass them on (kernel_model/sched_attrs.py: a reset-on-fork parent's
child starts as SCHED_NORMAL with nice >= 0 and without the flag). The modeled
scheduler is round-robin whatever the policy: the calls answer as Linux does, they change no
timing.

Privileges (creds.py's model): root holds CAP_SYS_NICE and may set any policy of any task.
Without it the checks for unprivileged tasks apply: a real-time policy needs RLIMIT_RTPRIO (0
by default: EPERM), SCHED_DEADLINE is EPERM, leaving SCHED_IDLE needs RLIMIT_NICE to allow the
task's nice value, a reset-on-fork flag cannot be cleared, and another user's task needs the
same owner (check_same_owner). Pid 1, the sandbox's init, is not the guest's to change (EPERM). sched_setscheduler cannot set SCHED_DEADLINE's parameters at all (EINVAL:
that is sched_setattr's job).
"""
import struct

from ... import errno as E
from ...pid_namespace import global_pid
from ...errno import GuestErrno
from ...sched_attrs import (RT_POLICIES, SCHED_BATCH, SCHED_DEADLINE, SCHED_IDLE, SCHED_NORMAL,
                           SCHED_RESET_ON_FORK)
from ...sched_owner import CAP_SYS_NICE, may_reschedule
from ..kinds import K
from ..registry import syscall
from .priority import INIT, _rlimit_nice
from .process import DEFAULT_RLIMITS, RLIMIT_RTPRIO

MAX_RT_PRIO = 100
FAIR, RT = {SCHED_NORMAL, SCHED_BATCH}, set(RT_POLICIES)
VALID = FAIR | RT | {SCHED_IDLE, SCHED_DEADLINE}


def find_task(ctx, pid: int):
    """find_process_by_pid(): 0 is the caller; INIT for pid 1; ESRCH for no such task."""
    if pid == 0:
        return ctx.thread
    pid = global_pid(ctx.proc, pid)             # a number of the caller's pid namespace
    if pid == 1:
        return INIT
    for proc in ctx.kernel.processes.values():
        for thread in proc.threads:
            if thread.tid == pid:
                return thread
    raise GuestErrno(E.ESRCH)


def _rlimit_rtprio(task) -> int:
    return task.process.rlimits.get(RLIMIT_RTPRIO, DEFAULT_RLIMITS[RLIMIT_RTPRIO])[0]


def _set(ctx, pid: int, policy: int | None, param: int) -> int:
    """do_sched_setscheduler(); `policy` None keeps the task's (sched_setparam)."""
    pid = ctx.int32(pid)
    if not param or pid < 0:
        raise GuestErrno(E.EINVAL)
    priority = struct.unpack("<i", ctx.read(param, 4))[0]
    task = find_task(ctx, pid)
    current = SCHED_NORMAL if task is INIT else task.sched_policy
    reset = bool(policy is not None and policy & SCHED_RESET_ON_FORK)
    if policy is None:
        reset = bool(current & SCHED_RESET_ON_FORK)
        policy = current & ~SCHED_RESET_ON_FORK
    else:
        policy &= ~SCHED_RESET_ON_FORK
        if policy not in VALID:
            raise GuestErrno(E.EINVAL)
    if priority & 0xFFFFFFFF > MAX_RT_PRIO - 1:      # sched_attr's u32 sched_priority
        raise GuestErrno(E.EINVAL)
    if policy == SCHED_DEADLINE or (policy in RT) != (priority != 0):
        raise GuestErrno(E.EINVAL)                    # no deadline parameters here
    if task is INIT:
        raise GuestErrno(E.EPERM)     # another owner's task: after the checks of the values
    if not may_reschedule(ctx.proc.creds, task.process.creds):
        raise GuestErrno(E.EPERM)     # check_same_owner
    if not ctx.proc.creds.capable(CAP_SYS_NICE):
        _check_unprivileged(task, policy, priority, reset)
    task.sched_policy = policy | (SCHED_RESET_ON_FORK if reset else 0)
    task.rt_priority = priority if policy in RT else 0
    task.dl = (0, 0, 0)               # (a deadline task's parameters go with its policy)
    return 0


def _check_unprivileged(task, policy: int, priority: int, reset: bool) -> None:
    """__sched_setscheduler()'s checks for a caller without CAP_SYS_NICE."""
    current = task.sched_policy & ~SCHED_RESET_ON_FORK
    if policy in RT:
        limit = _rlimit_rtprio(task)
        if policy != current and not limit:
            raise GuestErrno(E.EPERM)
        if priority > task.rt_priority and priority > limit:
            raise GuestErrno(E.EPERM)
    if current == SCHED_IDLE and policy != SCHED_IDLE and 20 - task.nice > _rlimit_nice(None, task):
        raise GuestErrno(E.EPERM)                     # !can_nice(p, task_nice(p))
    if task.sched_policy & SCHED_RESET_ON_FORK and not reset:
        raise GuestErrno(E.EPERM)


@syscall("sched_setscheduler", args=(("pid", K.PID), ("policy", K.INT), ("param", K.PTR)))
def sys_sched_setscheduler(ctx, pid, policy, param):
    policy = ctx.int32(policy)
    if policy < 0:
        raise GuestErrno(E.EINVAL)
    return _set(ctx, pid, policy, param)


@syscall("sched_setparam", args=(("pid", K.PID), ("param", K.PTR)))
def sys_sched_setparam(ctx, pid, param):
    return _set(ctx, pid, None, param)


@syscall("sched_getscheduler", args=(("pid", K.PID),))
def sys_sched_getscheduler(ctx, pid):
    pid = ctx.int32(pid)
    if pid < 0:
        raise GuestErrno(E.EINVAL)
    task = find_task(ctx, pid)
    return SCHED_NORMAL if task is INIT else task.sched_policy


@syscall("sched_getparam", args=(("pid", K.PID), ("param", K.PTR)))
def sys_sched_getparam(ctx, pid, param):
    pid = ctx.int32(pid)
    if not param or pid < 0:
        raise GuestErrno(E.EINVAL)
    task = find_task(ctx, pid)
    ctx.write(param, struct.pack("<i", 0 if task is INIT else task.rt_priority))
    return 0


@syscall("sched_get_priority_max", args=(("policy", K.INT),))
def sys_sched_get_priority_max(ctx, policy):
    policy = ctx.int32(policy)
    if policy not in VALID:
        raise GuestErrno(E.EINVAL)
    return MAX_RT_PRIO - 1 if policy in RT else 0


@syscall("sched_get_priority_min", args=(("policy", K.INT),))
def sys_sched_get_priority_min(ctx, policy):
    policy = ctx.int32(policy)
    if policy not in VALID:
        raise GuestErrno(E.EINVAL)
    return 1 if policy in RT else 0
