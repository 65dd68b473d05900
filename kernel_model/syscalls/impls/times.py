"""times(2) (kernel/sys.c): the process's CPU times and the clock-tick counter, in USER_HZ
(100) ticks.

The counter is Linux's jiffies with HZ = USER_HZ: it starts at INITIAL_JIFFIES (-300 s as an
unsigned 32-bit count, so that wraps show early) at boot, and the virtual clock's boot was an
hour before the run (kernel_model/time/clock.py). The process's user and system time, and its
waited-for children's, are time/task_times.py's (system time: the model's fixed cost of each
call the process made).
"""
import struct

from ..kinds import K
from ..registry import syscall

USER_HZ = 100
INITIAL_JIFFIES = (-300 * USER_HZ) & 0xFFFFFFFF


@syscall("times", args=(("buf", K.PTR),))
def sys_times(ctx, tbuf):
    clock, proc = ctx.kernel.clock, ctx.proc
    if tbuf:
        ticks_of = [ns * USER_HZ // 10**9 & ctx.mask
                    for ns in (proc.utime_ns, proc.stime_ns, proc.cutime_ns, proc.cstime_ns)]
        ctx.write(tbuf, struct.pack("<4I" if ctx.word == 4 else "<4q", *ticks_of))
    ticks = INITIAL_JIFFIES + clock.monotonic_ns() * USER_HZ // 10**9
    return ticks & ctx.mask            # compat: clock_t is 32 bits (compat_jiffies_to_clock_t)
