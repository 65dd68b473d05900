"""Restartable sequences for tool code (part of the debug interface, kernel_model/debug/):
Linux's rseq(2) critical sections (kernel/rseq.c, rseq_ip_fixup), offered to a tool's
in-guest code.

A tool registers [start, end) with an abort address in an address space. A thread whose
quantum ends inside the range is picked again (a slice more) until it has left it, as a
uniprocessor kernel finishes a critical section before it preempts; where it must leave the
CPU anyway (held by a tool, stopped by its tracer) or a signal frame is built for it while
its PC is inside the range, the PC moves to the abort address first, so the sequence runs
again from its beginning once the thread is back (rseq's abort: restarting at every
preemption could starve a thread at tiny quanta). On this machine's one CPU that makes a
sequence that ends with a single committing instruction atomic with respect to every other
thread without a locked instruction: a native `args:N` append (instrumenter/strategies/native.py) reads the
buffer index, stores the record and commits by incrementing the index; a thread switched out
half-way never leaves a slot reserved and unwritten, so the buffer can be drained at any
moment without losing a record.
"""
from ..process.proc import RUNNABLE


class RestartableSequences:
    _sequences: dict | None = None        # space.serial -> [(start, end, abort)]
    _switch_listeners: tuple = ()         # tools told when a thread leaves the CPU (on_switch_out)

    def on_switch_out(self, listener) -> None:
        """`listener(thread)` is called each time the kernel switches `thread` out with its
        registers live, or builds a signal frame for it (where restart_sequence is asked), so
        a tool whose in-guest code buffers records per address space can collect them in the
        order the threads ran (the probe language's captured printf, trapline/lang/
        native_printf.py), as perf reads its ring buffers at context switches."""
        self._switch_listeners = (*self._switch_listeners, listener)

    def register_restartable(self, space, start: int, end: int, abort: int) -> None:
        if self._sequences is None:
            self._sequences = {}
        self._sequences.setdefault(space.serial, []).append((start, end, abort))

    def restart_sequence(self, thread) -> None:
        """The kernel asks before switching `thread` out or building a signal frame for it
        (its registers live in its Machine): inside a sequence, back to its abort address."""
        for listener in self._switch_listeners:
            listener(thread)
        sequences = self._sequences
        if not sequences:
            return
        ranges = sequences.get(thread.process.space.serial)
        if not ranges:
            return
        machine = thread.process.machine
        pc = machine.pc
        for start, end, abort in ranges:
            if start <= pc < end:
                machine.pc = abort
                return

    def sequence_to_finish(self, current, chosen):
        """The run loop's next thread: `current` again while its PC is inside a sequence (its
        registers live, runnable, held by nobody), else the scheduler's `chosen`."""
        if not self._sequences or current is None or current is chosen \
                or current.state != RUNNABLE or current.suspended or current.context is not None:
            return chosen
        ranges = self._sequences.get(current.process.space.serial)
        if ranges:
            pc = current.process.machine.pc
            if any(start <= pc < end for start, end, _ in ranges):
                return current
        return chosen

    def copy_restartable(self, parent_space, child_space) -> None:
        """fork: the child's memory holds the same code."""
        if self._sequences and parent_space.serial in self._sequences:
            self._sequences[child_space.serial] = list(self._sequences[parent_space.serial])

    def forget_restartable(self, space) -> None:
        if self._sequences:
            self._sequences.pop(space.serial, None)
