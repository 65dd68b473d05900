"""ITIMER_REAL (setitimer, alarm): per-process timers on the virtual clock, as the scheduler
sees them. When a timer's deadline passes, SIGALRM is posted and an interval timer re-arms."""
from ..process.proc import ZOMBIE
from ..signals import SIGALRM


class IntervalTimers:
    """The processes' ITIMER_REAL timers, as the scheduler sees them."""

    def __init__(self, kernel):
        self.kernel = kernel

    def _armed(self):
        return [p for p in sorted(self.kernel.processes.values(), key=lambda p: p.pid)
                if p.itimer_real is not None and p.state != ZOMBIE]

    def next_deadline(self) -> int | None:
        armed = self._armed()
        return min(p.itimer_real[0] for p in armed) if armed else None

    def fire(self, now: int) -> None:
        for proc in self._armed():
            deadline, interval = proc.itimer_real
            if deadline <= now:
                proc.itimer_real = (deadline + interval * (1 + (now - deadline) // interval), interval) \
                    if interval else None
                self.kernel.signals.post(proc, SIGALRM, info={"code": 0x80})
