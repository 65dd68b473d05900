"""sched_setattr and sched_getattr (kernel/sched/core.c, Linux 6.1): the policy calls of
sched_policy.py through struct sched_attr {u32 size, policy; u64 flags; s32 nice; u32 priority;
u64 runtime, deadline, period; u32 util_min, util_max}.

sched_setattr: EINVAL for no struct, a negative pid or flags; the struct's size (0 meaning the
first version's 48 bytes) must be 48..4096, bytes past what the kernel knows must be zero
(E2BIG, the kernel's size written back); a negative policy is EINVAL; ESRCH for no task. Then
the policy is set as sched_setscheduler sets it, with the same model of privilege
(sched_policy.py): with CAP_SYS_NICE (root's) any policy, SCHED_DEADLINE with valid parameters
admitted within the CPUs' bandwidth (sched_deadline.py: EINVAL, EBUSY); without it
SCHED_DEADLINE is EPERM and a fair policy's nice value may not go below RLIMIT_NICE's (EPERM).
sched_getattr: EINVAL for no struct, a negative pid, a size outside 48..4096 or flags; ESRCH;
the task's policy (with SCHED_FLAG_RESET_ON_FORK), its priority or nice, a deadline task's
runtime, deadline and period, utilization clamps 0..1024, copied up to the size asked, which
is written as the struct's size.
"""
import struct

from ... import errno as E
from ... import sched_deadline
from ...errno import GuestErrno
from ...sched_attrs import SCHED_DEADLINE, SCHED_RESET_ON_FORK
from ...sched_owner import CAP_SYS_NICE
from ..kinds import K
from ..registry import syscall
from .priority import INIT, _rlimit_nice
from .sched_policy import FAIR, RT, VALID, MAX_RT_PRIO, _check_unprivileged, find_task

VER0, VER1, PAGE = 48, 56, 4096
LAYOUT = "<IIQiIQQQII"                   # struct sched_attr, VER1
SCHED_FLAG_RESET_ON_FORK, SCHED_FLAG_KEEP_POLICY, SCHED_FLAG_KEEP_PARAMS = 0x01, 0x08, 0x10
SCHED_FLAG_ALL = 0x7F
UCLAMP_MAX = 1024


@syscall("sched_setattr", args=(("pid", K.PID), ("attr", K.PTR), ("flags", K.HEX)))
def sys_sched_setattr(ctx, pid, attr, flags):
    pid = ctx.int32(pid)
    if not attr or pid < 0 or flags:
        raise GuestErrno(E.EINVAL)
    size, policy, sched_flags, nice, priority, dl = _copy_attr(ctx, attr)
    if ctx.int32(policy) < 0:
        raise GuestErrno(E.EINVAL)
    task = find_task(ctx, pid)
    current = 0 if task is INIT else task.sched_policy & ~SCHED_RESET_ON_FORK
    if sched_flags & SCHED_FLAG_KEEP_POLICY:
        policy = current
    if policy not in VALID or sched_flags & ~SCHED_FLAG_ALL or priority > MAX_RT_PRIO - 1:
        raise GuestErrno(E.EINVAL)
    if sched_flags & SCHED_FLAG_KEEP_PARAMS and task is not INIT:
        priority = task.rt_priority
    if policy == SCHED_DEADLINE and not sched_deadline.params_valid(*dl) \
            or (policy in RT) != (priority != 0):
        raise GuestErrno(E.EINVAL)
    if task is INIT:
        raise GuestErrno(E.EPERM)
    reset = bool(sched_flags & SCHED_FLAG_RESET_ON_FORK)
    nice = min(max(nice, -20), 19)
    if not ctx.proc.creds.capable(CAP_SYS_NICE):
        if policy == SCHED_DEADLINE:
            raise GuestErrno(E.EPERM)
        _check_unprivileged(task, policy, priority, reset)
        if policy in FAIR and nice < task.nice and 20 - nice > _rlimit_nice(ctx, task):
            raise GuestErrno(E.EPERM)        # can_nice
    dl = sched_deadline.stored(*dl) if policy == SCHED_DEADLINE else (0, 0, 0)
    if policy == SCHED_DEADLINE and not sched_deadline.admits(_threads(ctx), task, dl[0], dl[2]):
        raise GuestErrno(E.EBUSY)            # sched_dl_overflow
    task.sched_policy = policy | (SCHED_RESET_ON_FORK if reset else 0)
    task.rt_priority = priority if policy in RT else 0
    task.dl = dl
    if policy not in RT:
        task.nice = nice
    return 0


def _threads(ctx):
    return [t for p in ctx.kernel.processes.values() for t in p.live_threads()]


def _copy_attr(ctx, attr: int):
    """sched_copy_attr: (size, policy, flags, nice, priority, (runtime, deadline, period))."""
    size = struct.unpack("<I", ctx.read(attr, 4))[0] or VER0
    if not VER0 <= size <= PAGE:
        ctx.write(attr, struct.pack("<I", VER1))
        raise GuestErrno(E.E2BIG)
    raw = ctx.read(attr, size)
    if any(raw[VER1:]):
        ctx.write(attr, struct.pack("<I", VER1))
        raise GuestErrno(E.E2BIG)
    fields = struct.unpack(LAYOUT, raw[:VER1].ljust(VER1, b"\0"))
    return size, fields[1], fields[2], fields[3], fields[4], fields[5:8]


@syscall("sched_getattr", args=(("pid", K.PID), ("attr", K.PTR), ("size", K.UINT), ("flags", K.HEX)))
def sys_sched_getattr(ctx, pid, attr, size, flags):
    pid, size = ctx.int32(pid), size & 0xFFFFFFFF
    if not attr or pid < 0 or not VER0 <= size <= PAGE or flags:
        raise GuestErrno(E.EINVAL)
    task = find_task(ctx, pid)
    policy = 0 if task is INIT else task.sched_policy
    base = policy & ~SCHED_RESET_ON_FORK
    sched_flags = SCHED_FLAG_RESET_ON_FORK if policy & SCHED_RESET_ON_FORK else 0
    priority = 0 if task is INIT or base not in RT else task.rt_priority
    nice = 0 if task is INIT or base in RT else task.nice
    dl = (0, 0, 0) if task is INIT or base != SCHED_DEADLINE else task.dl     # __getparam_dl
    out_size = min(size, VER1)
    raw = struct.pack(LAYOUT, out_size, base, sched_flags, nice, priority, *dl, 0, UCLAMP_MAX)
    ctx.write(attr, raw[:out_size])
    return 0
