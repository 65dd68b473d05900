"""A ptraced task's sleeping call ends before its tracer sees the signal that woke it.

Linux queues every signal for a ptraced task, even one it ignores (kernel/signal.c sig_ignored:
sig_task_ignored is not asked under ptrace), and the signal wakes the task: the calls that fail
with -EINTR whatever the signal's action (sleep_kinds.py EINTR_WITHOUT_HANDLER: fs/eventpoll.c
ep_poll, kernel/signal.c do_sigtimedwait, ipc/sem.c, fs/aio.c io_getevents; not msgrcv, whose
ipc/msg.c says -ERESTARTNOHAND) return it there, and only then, on the way back to user mode,
get_signal stops the task for its tracer (ptrace_signal, the signal-delivery-stop). So the tracer
finds the call over (the PC past the system-call instruction, -EINTR in the result register: gdb
shows the stop there), and it stays over whatever the tracer does with the signal: delivered,
ignored, or dropped (gdb's `signal 0`, `handle SIG nopass`; arch/x86/kernel/signal.c
arch_do_signal_or_restart restarts only the -ERESTART* codes); a fatal signal too meets the call
over (strace: `= -1 EINTR`, the signal, `+++ killed by SIGTERM +++`). The sandbox ends such a call
when its signal is delivered (delivery.py _finish_interrupted_call): for a ptraced thread
(kernel_model/ptraced.py) the run loop ends it here first, before a debugger's stop
(kernel_model/debug/run.py intercept_signal).

Imported when a ptraced thread has a signal to take: an untraced run never needs it.
"""
from .delivery import bit
from .sleep_kinds import EINTR_WITHOUT_HANDLER, sleeping_in
from .numbers import SIGKILL


def end_sleep_for_tracer(signals, thread) -> None:
    """`thread`, ptraced, is about to take a signal: its sleeping EINTR call returns -EINTR now.
    A SIGKILL is left to end the task inside its call (no stop, no return: strace's
    `<unfinished ...>`, then `+++ killed by SIGKILL +++`)."""
    if sleeping_in(thread) not in EINTR_WITHOUT_HANDLER:
        return
    pending = signals.deliverable(thread)
    if not pending or pending & bit(SIGKILL):
        return
    signals._finish_interrupted_call(thread, restart=False)     # ended as a handler's signal ends it
