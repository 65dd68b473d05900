"""CPU affinity: sched_getaffinity / sched_setaffinity (kernel/sched/core.c, kernel/compat.c).

The modeled machine has NR_CPUS online CPUs (kernel_model/cpu/cpus.py). A task's effective mask is
always its requested mask ANDed with the online CPUs, so with every online CPU allowed there is
nothing to remember per task: getaffinity reports the online mask, and setaffinity only has to
refuse a mask with no online CPU (EINVAL, as __set_cpus_allowed_ptr does). Any live task may be
named, pid 0 meaning the caller and pid 1 the virtual init (root's); sched_setaffinity of
another user's task is EPERM (check_same_owner, kernel_model/sched_owner.py).
"""
from ... import errno as E
from ...pid_namespace import global_pid
from ...cpu.cpus import ALL_CPUS, CPUMASK_SIZE, NR_CPUS
from ...errno import GuestErrno
from ...creds import ROOT
from ...process.proc import INIT_PID
from ...sched_owner import may_reschedule
from ..kinds import K
from ..registry import syscall


def _check_task(ctx, pid: int):
    """find_process_by_pid(): 0 is the caller; else any task (thread id) still in the pid
    table, zombies included until reaped; negative pids name nothing (ESRCH). The task's
    process, or None for the virtual init."""
    pid = global_pid(ctx.proc, ctx.int32(pid))      # of the caller's pid namespace
    if pid == 0:
        return ctx.proc
    if pid == INIT_PID:
        return None
    for proc in ctx.kernel.processes.values():
        if proc.pid == pid or any(t.tid == pid for t in proc.threads):
            return proc
    raise GuestErrno(E.ESRCH)


@syscall("sched_getaffinity", args=(("pid", K.PID), ("cpusetsize", K.ULONG), ("mask", K.STRUCT)))
def sys_sched_getaffinity(ctx, pid, size, mask):
    # Linux checks the size first: it must hold nr_cpu_ids bits and be a whole number of the
    # caller's longs (compat_ulong_t on i386); it returns min(len, cpumask_size()) bytes.
    size &= 0xFFFFFFFF                                  # unsigned int len
    if size * 8 < NR_CPUS or size % ctx.word:
        raise GuestErrno(E.EINVAL)
    _check_task(ctx, pid)
    n = min(size, CPUMASK_SIZE)
    ctx.write(mask, ALL_CPUS.to_bytes(n, "little"))
    return n


@syscall("sched_setaffinity", args=(("pid", K.PID), ("cpusetsize", K.ULONG), ("mask", K.PTR)))
def sys_sched_setaffinity(ctx, pid, size, mask):
    # get_user_cpu_mask(): a shorter mask is zero-extended, a longer one is cut to
    # cpumask_size(); it is read (EFAULT) before the task is looked up (ESRCH).
    n = min(size & 0xFFFFFFFF, CPUMASK_SIZE)
    requested = int.from_bytes(ctx.read(mask, n), "little") if n else 0
    target = _check_task(ctx, pid)
    if not may_reschedule(ctx.proc.creds, target.creds if target is not None else ROOT):
        raise GuestErrno(E.EPERM)          # check_same_owner, before the mask is looked at
    if not requested & ALL_CPUS:
        raise GuestErrno(E.EINVAL)
    return 0
