"""The task limit (the sandbox's RLIMIT_NPROC) and when a guest at it is a runaway (issue 26).

Linux's copy_process (kernel/fork.c) fails with EAGAIN once the user's tasks reach
RLIMIT_NPROC, and a program may handle that: bash's make_child (jobs.c) prints "fork: retry",
sleeps 1, 2, 4 and 8 seconds and tries again (five failures at most before it gives up), and a
job server waits for a child to end before it forks the next one. So EAGAIN is what a fork at
the limit gets here too, and the run goes on.

A fork bomb never gets past the limit either, but it never leaves it: every one of its tasks
keeps forking and none ends, and before this check it spun until --max-insns ran out — 256
tasks failing forks in turn for minutes, with the memory of 256 address spaces held. The run
is stopped, with a report, when at the limit

    at least RUNAWAY_TASKS tasks (or every task, under a smaller limit) have each failed
    RUNAWAY_FAILURES forks or clones, and no task has ended since the first of those failures.

RUNAWAY_FAILURES = 16 is three times bash's five tries, so a shell that reports "fork: retry"
and gives up, or a program that retries a few times, is far from it. RUNAWAY_TASKS = 8 asks
that the failures come from many tasks, as they do in a bomb (each task it made forks again):
one parent spinning on fork() until one of its busy children ends is one task, however long
it spins, and is not stopped. A bomb whose tasks all fork meets both within its first slices
at the limit.
"""
from . import errno as E
from .errno import GuestErrno
from .errors import KernelError

RUNAWAY_FAILURES = 16      # failed forks per task (bash gives up after 5)
RUNAWAY_TASKS = 8          # tasks that each failed that many times


class TaskLimitRunaway(KernelError):
    """The guest kept forking at the task limit with nothing ending: the run stops."""


class TaskLimit:
    def __init__(self, limit: int):
        self.limit = limit
        self.failures: dict[int, int] = {}      # tid -> forks failed at the limit since an exit
        self.persistent = 0                     # tasks among them at RUNAWAY_FAILURES
        self.runaway: TaskLimitRunaway | None = None

    def check(self, tasks: int, tid: int) -> None:
        """EAGAIN when `tasks` alive already reach the limit; `tid` is the task that forks."""
        if tasks < self.limit:
            return
        self.failures[tid] = failed = self.failures.get(tid, 0) + 1
        if failed == RUNAWAY_FAILURES:
            self.persistent += 1
        raise GuestErrno(E.EAGAIN, "task limit")

    def task_exited(self) -> None:
        """A task ended: room was made, so the failures so far are no runaway's."""
        self.failures.clear()
        self.persistent = 0

    def is_runaway(self) -> bool:
        return self.persistent >= min(RUNAWAY_TASKS, self.limit)

    def stop(self, processes: int, threads: int, created: int) -> TaskLimitRunaway:
        """The report: the limit, who is alive, and how many processes the run made."""
        self.runaway = TaskLimitRunaway(
            f"task limit of {self.limit} reached and kept: {processes} processes and "
            f"{threads} other threads alive, {created} processes created in all; "
            f"{self.persistent} tasks failed "
            f"{RUNAWAY_FAILURES} or more forks each (EAGAIN) with none ending: a runaway, stopped")
        return self.runaway
