"""A Scheduler with `count` runnable threads of their own processes (tids 100, 101, ...) and a
clock that stands still: the scene the scheduler's unit tests and properties start from."""
from types import SimpleNamespace

from kernel_model.process.proc import Thread
from kernel_model.process.sched import Scheduler


class StillClock:
    @staticmethod
    def monotonic_ns() -> int:
        return 0


def scheduler_with_threads(count: int):
    scheduler = Scheduler(StillClock(), quantum=7)
    threads = [Thread(tid=100 + i, process=SimpleNamespace(pid=100 + i), kstack_top=0)
               for i in range(count)]
    for thread in threads:
        scheduler.add(thread)
    return scheduler, threads
