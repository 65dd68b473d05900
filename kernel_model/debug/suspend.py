"""Holding threads still (part of the debug interface, kernel_model/debug/): what
PTRACE_INTERRUPT / a group stop give a real tool, and what US 7,350,196's stop-all scheme ([0005])
needs — "all threads executing in the instrumented program are suspended" while one thread
single-steps an original instruction.

A hold is counted (two tools, or one tool twice, may hold a thread; it runs again when every
hold is released) and orthogonal to the thread's state: a held thread that sleeps still
receives its wakeups and signals, it is only not scheduled (kernel_model/process/sched.py). Holding
the running thread inside a hook stops its Machine, as a stop for the tracer does. (Named
suspend_thread/resume_thread: stop/resume are the tracing facility's, ptrace's stops with
their notifications, kernel_model/debug/tracing/facility.py; a hold notifies nobody.)
"""
from ..process.proc import ZOMBIE
from ..signals import SIGKILL

ALL_BUT_SIGKILL = ((1 << 64) - 1) & ~(1 << (SIGKILL - 1))


class ThreadHolds:
    def __init__(self, kernel):
        self._kernel = kernel

    def suspend_thread(self, thread) -> None:
        """Keep `thread` off the CPU until `resume_thread(thread)` (one per suspend)."""
        kernel = self._kernel
        kernel.scheduler.suspend(thread)
        if thread is kernel.current and kernel.in_hook:
            thread.process.machine.stop()

    def resume_thread(self, thread) -> None:
        """Release one hold of `thread` (KernelError if it has none)."""
        self._kernel.scheduler.resume(thread)

    @staticmethod
    def hold_signals(thread) -> None:
        """Keep signals sent to `thread` pending, undelivered, until release_signals: uprobes'
        uprobe_deny_signal, which keeps a thread from taking a signal while it single-steps
        a probed instruction (the handler would run with the original exposed, and a return
        to the site would report the hit again). SIGKILL is never held, and a fault of the
        thread's own instruction ends the hold (kernel_model/user_faults.py)."""
        thread.held_signals = ALL_BUT_SIGKILL

    @staticmethod
    def release_signals(thread) -> None:
        """What was held is deliverable again, at the thread's next return to user code."""
        thread.held_signals = 0

    @staticmethod
    def is_suspended(thread) -> bool:
        return thread.suspended > 0

    def space_threads(self, process) -> list:
        """Every live thread that runs in `process`'s address space, in creation order: its own
        threads, a vfork child borrowing the space, processes made with clone(CLONE_VM) — every
        thread that can execute the code a tool patches there."""
        space = process.space
        return [t for t in self._kernel.scheduler.threads
                if t.process.space is space and t.state != ZOMBIE]

    def live_processes(self) -> list:
        """Every process that has not exited, by pid (a tool that enables a probe while the
        program runs places it in those it traces)."""
        return [process for _, process in sorted(self._kernel.processes.items())
                if process.state != ZOMBIE]
