"""RLIMIT_CPU (kernel/time/posix-cpu-timers.c check_process_timers, check_rlimit): when the
process's CPU time reaches the soft limit, in seconds, it gets SIGXCPU and the soft limit
goes one second up, so that SIGXCPU comes again every second; at the hard limit SIGKILL.

The limit is a timer of the process, kept and fired with its CPU interval timers (time/itimer.py,
under the key CPU_LIMIT) and with their approximation: the CPU time it counts is the virtual clock's
advance from when it is armed, on top of the time the process had already been charged
(time/task_times.py). It is armed by setrlimit (update_rlimit_cpu) and, for a child that
inherits the limit, at fork from a CPU time of 0 (posix_cpu_timers_init_group).
"""
RLIMIT_CPU = 0
RLIM_INFINITY = (1 << 64) - 1
CPU_LIMIT = 3                   # the timer's key, beside ITIMER_REAL/VIRTUAL/PROF (0..2)
NS = 10**9


def arm(proc, now: int) -> None:
    """The limit's next expiry: the soft limit less the CPU time used, from `now`."""
    soft, _ = proc.rlimits.get(RLIMIT_CPU, (RLIM_INFINITY, RLIM_INFINITY))
    if soft == RLIM_INFINITY:
        proc.itimer_cpu.pop(CPU_LIMIT, None)
        return
    used = proc.utime_ns + proc.stime_ns
    proc.itimer_cpu[CPU_LIMIT] = (now + max(0, soft * NS - used), 0)
