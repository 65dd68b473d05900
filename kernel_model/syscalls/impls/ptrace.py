"""ptrace(2) as far as the model has tracers (kernel/ptrace.c).

The sandbox's tracers are tools outside the guest (kernel_model/ptraced.py): a guest cannot be
one. So the one request the model answers is the task's own PTRACE_TRACEME while a tool already
ptraces it: ptrace_traceme fails with EPERM when current->ptrace is set, which a program under
strace or gdb sees (the classic "am I being debugged" test). Every other request would make a
guest the tracer of another guest (PTRACE_TRACEME's parent, PTRACE_ATTACH, PTRACE_SEIZE, and the
requests on a tracee): not modeled, -ENOSYS, reported once as an unimplemented call is.
"""
from ... import errno as E
from ...errno import GuestErrno
from ..kinds import K
from ..registry import syscall

PTRACE_TRACEME = 0
# arch/x86/entry/syscalls/syscall_32.tbl and syscall_64.tbl: its number, for the report
NUMBER = {"i386": 26, "x86_64": 101}


@syscall("ptrace", args=(("request", K.LONG), ("pid", K.PID), ("addr", K.PTR), ("data", K.PTR)))
def sys_ptrace(ctx, request, pid, addr, data):
    if request == PTRACE_TRACEME and ctx.thread.ptrace:
        raise GuestErrno(E.EPERM)              # ptrace_traceme: already traced
    ctx.kernel.report_unimplemented(ctx.proc, "ptrace", NUMBER[ctx.abi])
    return -E.ENOSYS
