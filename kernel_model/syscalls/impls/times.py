"""times(2) (kernel/sys.c): the process's CPU times and the clock-tick counter, in USER_HZ
(100) ticks.

The counter is Linux's jiffies with HZ = USER_HZ: it starts at INITIAL_JIFFIES (-300 s as an
unsigned 32-bit count, so that wraps show early) at boot, and the virtual clock's boot was an
hour before the run (kernel_model/time/clock.py). CPU time is the model's process CPU clock, the one
clock_gettime(CLOCK_PROCESS_CPUTIME_ID) reads, counted as user time; waited-for children's
times are not kept (0).
"""
import struct

from ..kinds import K
from ..registry import syscall

USER_HZ = 100
INITIAL_JIFFIES = (-300 * USER_HZ) & 0xFFFFFFFF


@syscall("times", args=(("buf", K.PTR),))
def sys_times(ctx, tbuf):
    clock = ctx.kernel.clock
    if tbuf:
        user = clock.elapsed_ns * USER_HZ // 10**9
        ctx.write(tbuf, struct.pack("<4I" if ctx.word == 4 else "<4q", user & ctx.mask, 0, 0, 0))
    ticks = INITIAL_JIFFIES + clock.monotonic_ns() * USER_HZ // 10**9
    return ticks & ctx.mask            # compat: clock_t is 32 bits (compat_jiffies_to_clock_t)
