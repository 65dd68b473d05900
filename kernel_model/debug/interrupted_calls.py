"""A thread's system call as Linux's registers show it to a tracer while a signal has
interrupted it (part of the debug interface, kernel_model/debug/): PTRACE_GETREGS between the
call's end and the signal's delivery.

On Linux the sleeping call returns when the signal wakes it: the PC is past the system-call
instruction, the result register holds the call's -ERESTART* code (-ERESTARTSYS for a read of a
pipe, -ERESTART_RESTARTBLOCK for a relative sleep...) and orig_ax its number; only at the
delivery does arch_do_signal_or_restart (arch/x86/kernel/signal.c) move the PC back and put the
number back for the call to be made again, or -EINTR for a handler's (handle_signal). gdb stops
the program in between (the signal-delivery-stop) and shows `$rax = -512`, `$orig_rax = 0`.
The sandbox keeps such a call rewound to be made again (kernel_model/blocking.py), its number in
the result register, until the delivery decides: a tool asks here what Linux would show instead,
and the program runs on from the rewound state (what it sees is unchanged).
"""
from ..blocking import CONDITION_MET
from ..signals.sleep_kinds import restart_code, thread_kind

RESULT = {64: "rax", 32: "eax"}
ARGUMENTS = {64: ("rdi", "rsi", "rdx"), 32: ("ebx", "ecx", "edx")}


class InterruptedCalls:
    def __init__(self, threads):
        self._threads = threads

    def interrupted_syscall(self, thread) -> tuple[int, int] | None:
        """(the -ERESTART* code as a positive errno, the call's number) of the call `thread`
        sleeps in, or None when it is in none (or its call completed before the signal came:
        it is made again for its result, as Linux's returned it)."""
        if thread.blocked_call is None or thread.restart.get(CONDITION_MET, False):
            return None
        bits = thread.process.machine.arch.bits
        read = self._threads.read_register
        args = tuple(read(thread, name) for name in ARGUMENTS[bits])
        return restart_code(thread_kind(thread), args), read(thread, RESULT[bits])
