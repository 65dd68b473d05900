"""A stop signal's default action: the process stops (kernel/signal.c do_signal_stop), and the
call its thread slept in ends first, as on Linux.

A stop signal wakes a sleeping task as any signal does (signal_wake_up): its call returns its
-ERESTART* code or, for the calls that fail with EINTR whatever the signal's action, -EINTR
(signal(7) "Interruption of system calls and library functions by stop signals": epoll_wait,
semop and semtimedop, sigtimedwait; the list is sleep_kinds.py's EINTR_WITHOUT_HANDLER). Then
get_signal takes the signal on the way back to user mode and the task stops there. At SIGCONT,
no handler having run, arch_do_signal_or_restart had already backed the -ERESTART* calls up to
be made again (a relative sleep as restart_syscall, to its first deadline), and the EINTR calls
return -1 EINTR: the program sees those fail after a stop and a continue with no handler.

A tracer sees it so (strace: the call's `= ? ERESTART_RESTARTBLOCK` or `= -1 EINTR`, the
signal-delivery-stop's `--- SIGSTOP {...} ---`, the group-stop's `--- stopped by SIGSTOP ---`;
src/strace.c print_stopped), and the parent's wait and SIGCHLD report the stop
(process/job_control.py). The process's other threads take the group stop too
(JOBCTL_STOP_PENDING: each is woken, its sleeping call ends as above, and do_signal_stop stops
it): the tools see each one's call end and its `--- stopped by SIGSTOP ---`, not the signal,
which one thread took. Their registers are in their saved contexts (kernel.py _switch_to).
"""
from emu.registers import REGISTER_IDS

from ..blocking import CONDITION_MET
from ..process import job_control
from ..process.proc import RUNNABLE, STOPPED
from .sleep_kinds import EINTR, EINTR_WITHOUT_HANDLER, saved_register, sleeping_in


def stop_process(signals, thread, sig: int, info: dict) -> None:
    """`thread` takes the stop signal `sig` (no handler, not ignored): its call ends, its process
    stops, its parent and the tools hear of it."""
    proc, debug = thread.process, signals.kernel.debug
    _end_call(signals, thread)
    newly = [t for t in proc.threads if t.state == RUNNABLE]
    for t in newly:
        t.state = STOPPED
    if not newly:
        return          # a stop of a stopped process is no new stop to report
    job_control.stopped(signals.kernel, proc, sig)      # the parent's WUNTRACED, its SIGCHLD
    debug.signal_stopped(proc, thread, sig, info)
    for other in newly:
        if other is not thread:
            _end_other_call(signals, other)
            debug.signal_stopped(proc, other, sig, None)     # its group stop alone


def _end_call(signals, thread) -> None:
    """The sleeping call ends as the stop's wakeup ends it: -EINTR for the calls that return it
    whatever the signal, else made again after the continue (the tools see the -ERESTART*)."""
    if sleeping_in(thread) in EINTR_WITHOUT_HANDLER:
        signals._finish_interrupted_call(thread, restart=False)
    else:
        signals._finish_interrupted_call(thread, restart=True, handled=False)


def _end_other_call(signals, thread) -> None:
    """_end_call for a thread whose registers are saved: an EINTR call returns -EINTR there
    (past the instruction), another is made again after the continue (reported once)."""
    call = thread.blocked_call
    if call is None:
        return
    if sleeping_in(thread) not in EINTR_WITHOUT_HANDLER:
        signals._report_made_again(thread, call)
        return
    if thread.restart.get(CONDITION_MET, False):
        thread.blocked_call = None          # completed before the stop: made again for its result
        return
    thread.blocked_call = None
    thread.restart.clear()
    signals.kernel.debug.syscall_interrupted(thread, call, EINTR)
    bits = thread.process.machine.arch.bits
    result, pc = ("rax", "rip") if bits == 64 else ("eax", "eip")
    _set_saved(thread, result, -EINTR & ((1 << bits) - 1))
    _set_saved(thread, pc, saved_register(thread, pc) + 2)           # past int 0x80 / syscall


def _set_saved(thread, name: str, value: int) -> None:
    """Set `thread`'s register where it is (sleep_kinds.py saved_register)."""
    context = thread.context
    if context is None:
        thread.process.machine.set_reg(name, value)
    else:
        context.reg_write(REGISTER_IDS[name], value)
