"""SCHED_DEADLINE's parameters and admission (kernel/sched/deadline.c, Linux 6.1).

A deadline task has a runtime, a relative deadline and a period (Thread.dl: ns). sched_setattr
checks them with __checkparam_dl and admits the task only if every deadline task's bandwidth
(runtime / period, in BW_SHIFT fixed point: to_ratio) still fits in the root domain's share,
global_rt_runtime / global_rt_period (950 ms of each second) of each CPU (__dl_overflow):
else EBUSY. The modeled scheduler runs every policy round-robin, so the parameters change no
timing; they are kept, read back by sched_getattr and counted for admission.
"""
from .cpu.cpus import NR_CPUS
from .sched_attrs import SCHED_DEADLINE, SCHED_RESET_ON_FORK

DL_SCALE = 10
BW_SHIFT = 20
NSEC_PER_USEC = 1000
PERIOD_MIN_US, PERIOD_MAX_US = 100, 1 << 22       # sysctl_sched_dl_period_{min,max}
RT_RUNTIME_US, RT_PERIOD_US = 950_000, 1_000_000  # sysctl_sched_rt_{runtime,period}


def params_valid(runtime: int, deadline: int, period: int) -> bool:
    """__checkparam_dl: runtime <= deadline <= period (a period of 0 is the deadline), the
    runtime at least 2**DL_SCALE ns, no top bit, the period within the sysctl's bounds."""
    if deadline == 0 or runtime < 1 << DL_SCALE:
        return False
    if deadline >> 63 or period >> 63:
        return False
    period = period or deadline
    if period < deadline or deadline < runtime:
        return False
    return PERIOD_MIN_US * NSEC_PER_USEC <= period <= PERIOD_MAX_US * NSEC_PER_USEC


def stored(runtime: int, deadline: int, period: int) -> tuple[int, int, int]:
    """__setparam_dl: (dl_runtime, dl_deadline, dl_period), the period defaulting to the
    deadline."""
    return runtime, deadline, period or deadline


def _to_ratio(period: int, runtime: int) -> int:
    return (runtime << BW_SHIFT) // period if period else 0


def admits(threads, task, runtime: int, period: int) -> bool:
    """sched_dl_overflow for `task` becoming a deadline task with these parameters: the other
    deadline tasks' bandwidth and its own within the CPUs' share."""
    total = sum(_to_ratio(t.dl[2], t.dl[0]) for t in threads
                if t is not task and t.sched_policy & ~SCHED_RESET_ON_FORK == SCHED_DEADLINE)
    limit = _to_ratio(RT_PERIOD_US, RT_RUNTIME_US) * NR_CPUS
    return total + _to_ratio(period, runtime) <= limit
