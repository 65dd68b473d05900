"""getrusage(2) (kernel/sys.c getrusage): the resources a process, its waited-for children or
the calling thread used. The model keeps CPU time (times.py's clock, counted as user time) and
the address space's size (ru_maxrss in KiB: every mapped page is resident); the counts it has
no notion of (faults, swaps, block I/O, messages, context switches) are 0, and the children's
are 0 as in times(2).
"""
import struct

from ... import errno as E
from ...errno import GuestErrno
from ..kinds import K
from ..registry import syscall

RUSAGE_SELF, RUSAGE_CHILDREN, RUSAGE_THREAD = 0, -1, 1


@syscall("getrusage", args=(("who", K.INT), ("usage", K.PTR)))
def sys_getrusage(ctx, who, usage):
    who = ctx.int32(who)
    if who not in (RUSAGE_SELF, RUSAGE_CHILDREN, RUSAGE_THREAD):
        raise GuestErrno(E.EINVAL)
    user_ns = maxrss = 0
    if who != RUSAGE_CHILDREN:
        user_ns = ctx.kernel.clock.elapsed_ns
        maxrss = ctx.proc.vm.mapped_bytes() // 1024
    fields = [user_ns // 10**9, user_ns % 10**9 // 1000, 0, 0, maxrss] + [0] * 13
    ctx.write(usage, struct.pack(f"<18{'q' if ctx.word == 8 else 'i'}", *fields))
    return 0
