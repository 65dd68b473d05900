"""The clock ids of other tasks' CPU clocks (include/linux/posix-timers.h: a negative id made by
MAKE_PROCESS_CPUCLOCK and MAKE_THREAD_CPUCLOCK, what clock_getcpuclockid(3) and
pthread_getcpuclockid(3) return): ~pid << 3, bit 2 for a thread's clock, the low two bits the
kind (PROF, VIRT, SCHED); an id whose low three bits are CLOCKFD (3) is a dynamic clock, an
fd's, instead."""
from ..process.proc import INIT_PID

CLOCKFD, CLOCKFD_MASK = 3, 7
CPUCLOCK_MAX, CPUCLOCK_PERTHREAD = 3, 4


def is_cpu_clock(clock_id: int) -> bool:
    return clock_id < 0 and clock_id & CLOCKFD_MASK != CLOCKFD


def names_a_task(ctx, clock_id: int, gettime: bool = False) -> bool:
    """kernel/time/posix-cpu-timers.c pid_for_clock: a thread clock names a thread of the
    caller's process, a process clock a process (for clock_gettime also the caller's own
    thread by its tid); pid 0 is the caller."""
    if clock_id & 3 >= CPUCLOCK_MAX:
        return False
    pid = ~(clock_id >> 3)
    if pid == 0:
        return True
    if clock_id & CPUCLOCK_PERTHREAD:
        return any(t.tid == pid for t in ctx.proc.live_threads())
    if gettime and pid == ctx.thread.tid:
        return True
    return pid == INIT_PID or pid in ctx.kernel.processes
