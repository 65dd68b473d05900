"""setitimer's timers (and alarm): per-process timers on the virtual clock, as the scheduler
sees them. When a timer's deadline passes, its signal is posted and an interval timer re-arms.

ITIMER_REAL counts real time (SIGALRM). ITIMER_VIRTUAL and ITIMER_PROF count the process's
CPU time (SIGVTALRM, SIGPROF): the modeled CPU's time is the virtual clock itself, which moves
by the instructions of preempted slices, a fixed cost per system call and sleeps, so they
count it as ITIMER_REAL does (a process that only sleeps would not see them expire on Linux;
here they do — an approximation, kept because programs arm them to bound a computation).
RLIMIT_CPU's timer is kept with them (process/cpu_limit.py).
"""
from ..process.proc import ZOMBIE
from ..signals import SIGALRM
from ..signals.numbers import SIGKILL

ITIMER_REAL, ITIMER_VIRTUAL, ITIMER_PROF = 0, 1, 2
SIGVTALRM, SIGPROF = 26, 27
SIGNAL_OF = {ITIMER_REAL: SIGALRM, ITIMER_VIRTUAL: SIGVTALRM, ITIMER_PROF: SIGPROF}
SIGXCPU = 24


def timers_of(proc) -> dict:
    """which -> (deadline ns, interval ns) of `proc`'s armed timers."""
    armed = dict(proc.itimer_cpu)
    if proc.itimer_real is not None:
        armed[ITIMER_REAL] = proc.itimer_real
    return armed


class IntervalTimers:
    """The processes' setitimer timers, as the scheduler sees them."""

    def __init__(self, kernel):
        self.kernel = kernel

    def _armed(self):
        for proc in sorted(self.kernel.processes.values(), key=lambda p: p.pid):
            if proc.state != ZOMBIE:
                for which, timer in sorted(timers_of(proc).items()):
                    yield proc, which, timer

    def next_deadline(self) -> int | None:
        return min((timer[0] for _, _, timer in self._armed()), default=None)

    def fire(self, now: int) -> None:
        for proc, which, (deadline, interval) in list(self._armed()):
            if deadline <= now and which not in SIGNAL_OF:
                self._cpu_limit_reached(proc, deadline)
            elif deadline <= now:
                rearmed = (deadline + interval * (1 + (now - deadline) // interval), interval) \
                    if interval else None
                if which == ITIMER_REAL:
                    proc.itimer_real = rearmed
                elif rearmed is None:
                    del proc.itimer_cpu[which]
                else:
                    proc.itimer_cpu[which] = rearmed
                self._post(proc, SIGNAL_OF[which])

    def _cpu_limit_reached(self, proc, deadline: int) -> None:
        """check_process_timers' RLIMIT_CPU: at the hard limit SIGKILL; at the soft one
        SIGXCPU, the soft limit one second up and the next expiry a second later."""
        from ..process.cpu_limit import CPU_LIMIT, NS, RLIMIT_CPU     # (not at start-up)
        soft, hard = proc.rlimits[RLIMIT_CPU]
        if soft >= hard:
            del proc.itimer_cpu[CPU_LIMIT]
            self._post(proc, SIGKILL)
            return
        proc.rlimits[RLIMIT_CPU] = (soft + 1, hard)
        proc.itimer_cpu[CPU_LIMIT] = (deadline + NS, 0)
        self._post(proc, SIGXCPU)

    def _post(self, proc, sig: int) -> None:
        self.kernel.signals.post(proc, sig, info={"code": 0x80})      # SI_KERNEL
