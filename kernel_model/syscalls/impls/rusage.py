"""getrusage(2) (kernel/sys.c getrusage): the resources a process, its waited-for children or
the calling thread used. The model keeps CPU time (user and system: time/task_times.py) and
the address space's size (ru_maxrss in KiB: every mapped page is resident; the children's
is not kept, 0); the counts it has no notion of (faults, swaps, block I/O, messages, context
switches) are 0.
"""
import struct

from ... import errno as E
from ...errno import GuestErrno
from ..kinds import K
from ..registry import syscall

RUSAGE_SELF, RUSAGE_CHILDREN, RUSAGE_THREAD = 0, -1, 1


def pack_rusage(ctx, user_ns: int, system_ns: int, maxrss: int) -> bytes:
    """struct rusage: ru_utime and ru_stime (timevals), then 14 longs from ru_maxrss."""
    fields = [user_ns // 10**9, user_ns % 10**9 // 1000, system_ns // 10**9,
              system_ns % 10**9 // 1000, maxrss] + [0] * 13
    return struct.pack(f"<18{'q' if ctx.word == 8 else 'i'}", *fields)


@syscall("getrusage", args=(("who", K.INT), ("usage", K.PTR)))
def sys_getrusage(ctx, who, usage):
    who = ctx.int32(who)
    if who not in (RUSAGE_SELF, RUSAGE_CHILDREN, RUSAGE_THREAD):
        raise GuestErrno(E.EINVAL)
    task = ctx.thread if who == RUSAGE_THREAD else ctx.proc
    if who == RUSAGE_CHILDREN:
        times, maxrss = (ctx.proc.cutime_ns, ctx.proc.cstime_ns), 0
    else:
        times, maxrss = (task.utime_ns, task.stime_ns), ctx.proc.vm.mapped_bytes() // 1024
    ctx.write(usage, pack_rusage(ctx, *times, maxrss))
    return 0
