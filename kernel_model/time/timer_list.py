"""The timers the scheduler keeps time for (process/sched.py: next_deadline, fire): each kind
answers for its own, and the earliest deadline of all is the next one."""


class TimerList:
    def __init__(self, *kinds):
        self.kinds = kinds

    def next_deadline(self) -> int | None:
        return min((d for d in (k.next_deadline() for k in self.kinds) if d is not None), default=None)

    def fire(self, now: int) -> None:
        for kind in self.kinds:
            kind.fire(now)
