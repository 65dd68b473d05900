"""The armed timerfds, as the scheduler sees them (next_deadline, fire): a timerfd's expiry
must wake a reader or a poller at its deadline even when nothing else would run then."""


class TimerFds:
    def __init__(self):
        self.files: list = []               # every timerfd armed once and not closed

    def watch(self, timerfd) -> None:
        if timerfd not in self.files:
            self.files.append(timerfd)

    def _armed(self) -> list:
        self.files = [f for f in self.files if not f.closed]
        return [f for f in self.files if f.deadline is not None]

    def next_deadline(self) -> int | None:
        return min((f.deadline for f in self._armed()), default=None)

    def fire(self, now: int) -> None:
        for f in self._armed():
            f.expire(now)
