"""A scheduler's quantum on the block clock: a slice that ends at the first block boundary at
or after its N instructions, without Unicorn's per-instruction counting hook (issue 31).

Unicorn stops a run after exactly N instructions only through `emu_start(count=N)`, whose hook
is called before every instruction (icount.py): a compute-bound program with several runnable
threads or processes ran several times slower than the same work in one task
(bench/quantum.py). A quantum needs no exact stop: Linux's scheduler preempts a task at its
next tick or resched check, never at an instruction chosen in advance (kernel/sched/core.c
scheduler_tick, then the return to user mode), so a slice may end a few instructions late.
What it needs is determinism, and the block clock (block_clock.py) gives it: the same run begins
the same blocks, so it stops at the same boundary and charges the same count.

The charge is the clock's own count of the blocks the slice began (a block a fault cut short
counts whole, its retried instruction again), not Unicorn's exact count: whether a tool counts
every instruction (icount.py) does not change where a thread is preempted. Users of a budget
that need an exact stop keep Unicorn's count (the run loop asks this only for a quantum that
nothing else cut: instruction alarms, a debugger's step, the --max-insns budget are exact).
Where C cannot be built, `take` answers None and the quantum is Unicorn's count as before.
"""
from . import exits
from .block_clock import available, clock_of


class QuantumRun:
    """One run under a quantum: the clock and its count when the run began."""
    __slots__ = ("clock", "before")

    def __init__(self, clock):
        self.clock = clock
        self.before = clock.executed

    def end_run(self) -> None:
        """Later runs on this Machine are not stopped by this deadline."""
        self.clock.end_run()

    def ended(self, machine, exit_: exits.Exit) -> exits.Exit:
        """The run's instructions as its `last_run_insns`, and BUDGET when the quantum, not a
        handler, ended it."""
        machine.last_run_insns = self.clock.executed - self.before
        if self.clock.fired and exit_.kind == exits.STOPPED:
            return exits.Exit(exits.BUDGET, exit_.pc)
        return exit_


def take(machine, count: int) -> QuantumRun | None:
    """The block clock of `machine`, set to stop its next run `count` instructions on; None
    where the C hook cannot be built."""
    if not available():
        return None
    clock = clock_of(machine)
    clock.begin_run(count)
    return QuantumRun(clock)
