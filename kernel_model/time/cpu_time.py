"""Where the run's instructions went, for tools: per thread, and on a virtual clock that never
stands still while the guest computes.

The guest's own clock (clock.py) moves by a preempted slice's instructions, each system call's
fixed cost and sleeps; a slice that a system call or a fault ends adds nothing for the
instructions it ran, so that a probe's added instructions — which end no slice — cannot change
what a probed program reads from its clock. A tool measuring a function in virtual time (the
walk-up's `--metric time`, US 7,823,129 [0190]) needs a clock that also moves inside such a slice:
`virtual_time_ns` is the guest's clock plus the instructions it has not charged (one nanosecond
each, as a preemption charges them), exact inside a hook. And a thread's own instructions, like
a task clock (perf's task-clock, not the CPU's): `thread_instructions` leaves out what other
threads of the process ran while it was switched out.

Both count on the run's instruction clock (emu/icount.py), so they move only in processes a
tool counts (DebugInterface.count_instructions); elsewhere they read the guest's clock and 0.
"""
from __future__ import annotations


class CpuTime:
    def __init__(self, clock):
        self.clock = clock              # the guest's VirtualClock
        self.uncharged_ns = 0           # instructions run that the guest's clock was not given
        self._slice_start = 0           # the instruction clock when the running slice began
        self._machine = None            # the running slice's Machine (None between slices)

    def begin(self, machine) -> None:
        """A slice starts on `machine`. One that does not count its instructions yet adds none
        for this slice, even if a tool starts counting while it runs (its clock would then
        count from another origin)."""
        counted = machine.instructions_retired if machine.icount is not None else None
        self._machine = machine if counted is not None else None
        self._slice_start = counted or 0

    def end(self, thread, preempted_count: int) -> None:
        """The slice ended; a preemption gives the guest's clock its `preempted_count`."""
        ran = self._running()
        self._machine = None
        thread.instructions += ran
        self.clock.advance(preempted_count)
        self.uncharged_ns += ran - preempted_count if ran else 0

    def virtual_time_ns(self) -> int:
        return self.clock.elapsed_ns + self.uncharged_ns + self._running()

    def thread_instructions(self, thread, running: bool) -> int:
        """`thread`'s instructions; `running`: it is the thread of the slice under way."""
        return thread.instructions + (self._running() if running else 0)

    def _running(self) -> int:
        machine = self._machine
        if machine is None or machine.icount is None:
            return 0
        return max(0, machine.instructions_retired - self._slice_start)
