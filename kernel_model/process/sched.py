"""The scheduler: deterministic choice of the next thread, sleep/wakeup, timeouts, deadlock.

Policy (docs/ARCHITECTURE.md): a thread runs until it blocks, exits, or — only while another thread is
runnable — uses up its instruction quantum. The quantum is a turn's, not a slice's: a slice
that a fork, a fault or another call run outside Unicorn's hooks ends early leaves the thread
the rest of its quantum, not a new one (a thread failing fork() in a loop kept the CPU for
ever, and a fork bomb at the task limit was one process spinning while the others never ran:
issue 26), as Linux's scheduler charges a task's runtime whatever ends its time on the CPU. Runnable threads are served round-robin in the
order they were created, so a run's interleaving depends only on its inputs and the quantum.
A traced thread's syscall stop hands the CPU over: a tool that stops a thread at each syscall's
entry and exit, as strace's PTRACE_SYSCALL does (kernel/signal.c ptrace_stop calls schedule()),
lets the next runnable thread run at each stop (`hand_over`): on one CPU the other tracees run
while the tracer prints, so strace -f's processes take turns a stop each.
A wakeup preempts: the first thread a `wakeup(channel)` (a pipe or socket write, a child's exit,
a message, a semaphore) makes runnable runs next, once the waker's call has returned, as CFS's
check_preempt_wakeup (kernel/sched/fair.c) lets a woken task that has slept take the CPU from
its waker, and as a reader on the other CPU of a 2-CPU host reads each line as it is written.
When nothing is runnable but threads sleep with a deadline, virtual time jumps to the earliest
deadline. When nothing can ever run again, `deadlock_report()` names every sleeper.

A quantum ends at the first block boundary at or after its count, and the turn is charged
what ran (emu/quantum_clock.py: Unicorn's exact stop costs a hook call per instruction, and a
preemption needs no exact instruction, as Linux's, at the next tick, needs none), unless the
scheduler is `exact`: then at its very instruction, for the studies of what a preemption
between two given instructions does (the loss experiment's single-step windows). Either way
a run's interleaving depends only on its inputs.

Suspension (a tool's hold, kernel_model/debug/suspend.py) is orthogonal to the state: a held
thread keeps sleeping, waking and becoming runnable as it would, it is only never picked
until every hold is released (Linux's freezer and SIGSTOP keep a task off the CPU the same
way, without losing the wakeups that arrive meanwhile).
"""
from ..errors import KernelError
from .proc import RUNNABLE, SLEEPING, ZOMBIE, Thread

DEFAULT_QUANTUM = 200_000       # guest instructions per slice while several threads are runnable
TRACER_STOP = "tracer"          # channel tag of a thread stopped until its tracer resumes it


class Scheduler:
    def __init__(self, clock, quantum: int = DEFAULT_QUANTUM, *, exact: bool = False):
        self.clock = clock
        self.quantum = quantum
        self.exact = exact                    # quanta end at their instruction (module doc)
        self.threads: list[Thread] = []       # every live thread, in creation order
        self._next = 0                        # round-robin position
        self.timers = None                    # has next_deadline() and fire(now): interval timers
        self.preempting: Thread | None = None  # woken by wakeup(): runs next (wakeup preemption)
        self._handed_over: Thread | None = None  # stopped by its tracer: the next one runs

    def add(self, thread: Thread) -> None:
        self.threads.append(thread)

    def remove(self, thread: Thread) -> None:
        if thread in self.threads:
            i = self.threads.index(thread)
            self.threads.remove(thread)
            if i < self._next:
                self._next -= 1

    def runnable(self) -> list[Thread]:
        """The threads that may be picked: runnable and not held by a tool."""
        return [t for t in self.threads if t.state == RUNNABLE and not t.suspended]

    @staticmethod
    def suspend(thread: Thread) -> None:
        thread.suspended += 1

    @staticmethod
    def resume(thread: Thread) -> None:
        if thread.suspended <= 0:
            raise KernelError(f"{thread.describe()} is not suspended")
        thread.suspended -= 1

    def pick(self, current: Thread | None) -> Thread | None:
        """The thread a wakeup preempted `current` for; else keep `current` while it can run;
        otherwise the next runnable thread after it."""
        self._expire_deadlines()
        handed_over, self._handed_over = self._handed_over, None
        woken = self._take_preempting()
        if woken is not None:
            return woken
        if handed_over is not None and handed_over is current:
            return self.rotate(current)
        if current is not None and current.state == RUNNABLE and not current.suspended \
                and current in self.threads:
            return current
        return self.rotate(current)

    def rotate(self, current: Thread | None) -> Thread | None:
        """The thread a wakeup preempted `current` for; else the next runnable thread after
        `current` in creation order (or current itself)."""
        self._expire_deadlines()
        woken = self._take_preempting()
        if woken is not None:
            return woken
        if not self.threads:
            return None
        start = self.threads.index(current) + 1 if current in self.threads else self._next
        n = len(self.threads)
        for k in range(n):
            t = self.threads[(start + k) % n]
            if t.state == RUNNABLE and not t.suspended:
                self._next = (start + k) % n
                return t
        return self._wake_earliest_deadline()

    def hand_over(self, thread: Thread) -> None:
        """`thread` stopped for its tracer at a syscall: the next pick goes round to the next
        runnable thread (itself if none)."""
        self._handed_over = thread

    def yield_turn(self, thread: Thread) -> None:
        """sched_yield (kernel/sched/core.c do_sched_yield; fair.c yield_task_fair makes the
        caller the skip buddy): the next runnable thread after `thread` in creation order runs
        once the call returns, as a woken one would; nothing changes when none other can run
        (a thread spinning on sched_yield for its sibling kept the CPU for its whole quantum)."""
        n = len(self.threads)
        start = self.threads.index(thread) + 1 if thread in self.threads else 0
        for k in range(n - 1):
            t = self.threads[(start + k) % n]
            if t is not thread and t.state == RUNNABLE and not t.suspended:
                self.preempting = t
                return

    def others_runnable(self, thread: Thread) -> bool:
        threads = self.threads
        if len(threads) == 1:               # (asked at every traced call: the common case first)
            return False
        return any(t is not thread and t.state == RUNNABLE for t in threads)

    def _take_preempting(self) -> Thread | None:
        """The woken thread that preempts, if it can still run (once: the mark is spent)."""
        woken, self.preempting = self.preempting, None
        if woken is not None and woken.state == RUNNABLE and not woken.suspended \
                and woken in self.threads:
            return woken
        return None

    def _expire_deadlines(self) -> None:
        now = self.clock.monotonic_ns()
        if self.timers is not None:
            self.timers.fire(now)
        for t in self.threads:
            if t.state == SLEEPING and t.deadline_ns is not None and t.deadline_ns <= now:
                self.make_runnable(t)

    def _wake_earliest_deadline(self) -> Thread | None:
        """Nothing can run: jump virtual time to the next deadline (a sleep or a timer)."""
        deadlines = [t.deadline_ns for t in self.threads if t.state == SLEEPING and t.deadline_ns is not None]
        timer = self.timers.next_deadline() if self.timers is not None else None
        if timer is not None:
            deadlines.append(timer)
        if not deadlines:
            return None
        self.clock.idle(min(deadlines) - self.clock.monotonic_ns())
        self._expire_deadlines()
        runnable = self.runnable()
        return runnable[0] if runnable else self._wake_earliest_deadline()

    # ---- sleep / wakeup (xv6 proc.c) --------------------------------------------------------
    def sleep(self, thread: Thread, channels, reason: str, deadline_ns: int | None) -> None:
        thread.state = SLEEPING
        thread.wait_channels = tuple(channels)
        thread.wait_reason = reason
        thread.deadline_ns = deadline_ns

    def wakeup(self, channel) -> None:
        for t in self.threads:
            if t.state == SLEEPING and any(c is channel or c == channel for c in t.wait_channels):
                self.wake(t)

    def wake(self, thread: Thread) -> None:
        """Make a sleeper runnable; the first one woken runs next (wakeup preemption)."""
        self.make_runnable(thread)
        if self.preempting is None:
            self.preempting = thread

    @staticmethod
    def make_runnable(thread: Thread) -> None:
        if thread.state != ZOMBIE:
            thread.state = RUNNABLE
            thread.wait_channels = ()
            thread.wait_reason = ""
            thread.deadline_ns = None

    def slice_for(self, thread: Thread) -> int:
        """Instruction count for the next run: 0 (unlimited) when no other thread can run."""
        # A held runnable thread counts: the slice must end on time so that it gets its turn
        # once released (a timer tick does not stop because a tool holds a thread).
        others = any(t is not thread and t.state == RUNNABLE for t in self.threads)
        timed = any(t.state == SLEEPING and t.deadline_ns is not None for t in self.threads)
        timer = self.timers is not None and self.timers.next_deadline() is not None
        return self.quantum - thread.turn_used if others or timed or timer else 0

    @staticmethod
    def new_turn(thread: Thread) -> None:
        """`thread` is picked after another, or again after its turn ended: a whole quantum."""
        thread.turn_used = 0

    def turn_over(self, thread: Thread, insns: int) -> bool:
        """Charge a slice's `insns` to `thread`'s turn; whether its quantum is used up."""
        thread.turn_used += insns
        return thread.turn_used >= self.quantum

    def deadlock_report(self, tools=()) -> str:
        """One line per live thread (what it waits for), then one per tool that waits too
        (`tools`: the debug interface's tracers, US 7,185,320 FIG. 1's third party)."""
        lines = [_waiter_line(t) for t in self.threads if t.state != ZOMBIE]
        lines += [f"tool: {line}" for line in tools]
        return "deadlock: nothing can run\n" + "\n".join(f"  {line}" for line in lines)


def _waiter_line(t: Thread) -> str:
    head = f"{t.describe()} ({t.process.exe.decode(errors='replace')})"
    if t.suspended:
        head += " suspended by a tool,"
    if any(isinstance(c, tuple) and c[:1] == (TRACER_STOP,) for c in t.wait_channels):
        return f"{head} stopped {t.wait_reason}"
    return f"{head} {t.state}" + (f", waiting for {t.wait_reason}" if t.wait_reason else "")
