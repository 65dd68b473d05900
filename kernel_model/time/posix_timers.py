"""POSIX per-process timers (timer_create and its family): Linux kernel/time/posix-timers.c.

Each timer has a clock, a notification (a signal to the process or to one thread, or none) and
a deadline on the virtual monotonic clock, re-armed by its interval. A timer that expires
while its previous signal is still pending is not queued again: its overrun count grows
(posix_timer_fn / posixtimer_rearm), and the signal's siginfo says so (si_overrun). Timers
are not inherited by fork and are deleted by exec (exit_itimers in begin_new_exec).
"""
from typing import TYPE_CHECKING

from ..process.proc import ZOMBIE

if TYPE_CHECKING:
    from .posix_timer import PosixTimer

SIGEV_SIGNAL, SIGEV_NONE, SIGEV_THREAD, SIGEV_THREAD_ID = 0, 1, 2, 4
DELAYTIMER_MAX = 0x7FFFFFFF          # an overrun count saturates here (include/linux/posix-timers.h)


class PosixTimers:
    """Every process's POSIX timers, as the scheduler sees them (next_deadline, fire).

    A periodic timer whose signal was queued is parked until the signal is taken (delivered
    or waited for): then it is moved forward past the present, and the periods it missed
    are the signal's overrun (Linux re-arms it only then: posixtimer_rearm at dequeue,
    hrtimer_forward counting the overruns), so a 1 ns period does not fire once a nanosecond
    while the program has not even seen the first signal."""

    def __init__(self, kernel):
        self.kernel = kernel

    def _armed(self):
        for proc in sorted(self.kernel.processes.values(), key=lambda p: p.pid):
            if proc.state == ZOMBIE:
                continue
            for timer_id, timer in sorted(proc.posix_timers.items()):
                if timer.deadline is not None:
                    yield proc, timer_id, timer

    def next_deadline(self) -> int | None:
        return min((t.deadline for _, _, t in self._armed()), default=None)

    def fire(self, now: int) -> None:
        for proc, timer_id, timer in list(self._armed()):
            if timer.deadline > now:
                continue
            expiry, timer.deadline = timer.deadline, None
            if timer.notify == SIGEV_NONE:
                if timer.interval:
                    timer.deadline = expiry + timer.interval * ((now - expiry) // timer.interval + 1)
                continue
            self._queue(proc, timer_id, timer, expiry)

    def _queue(self, proc, timer_id: int, timer: "PosixTimer", expiry: int) -> None:
        word = proc.space.machine.arch.bits // 8
        timer.parked = (expiry, timer.armed)
        from .posix_timer import SI_TIMER, timer_siginfo   # (a timer exists: its module is there)
        info = {"code": SI_TIMER, "raw": timer_siginfo(word, timer_id, timer, 0)}
        info["dequeued"] = lambda: self._taken(info, word, timer_id, timer)
        target = timer.thread if timer.thread is not None and timer.thread.state != ZOMBIE else None
        self.kernel.signals.post(proc, timer.signo, thread=target, info=info)

    def _taken(self, info: dict, word: int, timer_id: int, timer: "PosixTimer") -> None:
        """Its signal is being delivered or waited for: a periodic timer moves on past the
        present, and the periods it missed are this signal's si_overrun and what
        timer_getoverrun says from now on (it_overrun_last), capped at DELAYTIMER_MAX."""
        if timer.parked is None or timer.parked[1] != timer.armed:
            return                       # set again (or deleted) since: nothing to re-arm
        expiry, timer.parked = timer.parked[0], None
        missed = 0
        if timer.interval:
            missed = (self.kernel.clock.monotonic_ns() - expiry) // timer.interval
            timer.deadline = expiry + timer.interval * (missed + 1)
        timer.overrun_last = min(missed, DELAYTIMER_MAX)
        from .posix_timer import timer_siginfo
        info["raw"] = timer_siginfo(word, timer_id, timer, timer.overrun_last)
