"""get_robust_list (kernel/futex/syscalls.c): the head of a thread's robust futex list, as
set_robust_list (process.py) registered it, and the list head's size.

Linux's order: pid 0 is the caller, another id names a thread (ESRCH); the caller must be
allowed to read it (ptrace_may_access, PTRACE_MODE_READ_REALCREDS: EPERM); then the size is
stored (EFAULT), then the head (EFAULT). A compat (i386) task gets both as 32-bit words
(compat_get_robust_list). Pid 1 is the sandbox's virtual init, root's, with no list
(spawn.py: the guest's first process is its child). LTP get_robust_list01.
"""
from ... import errno as E
from ...pid_namespace import global_pid
from ...creds import ROOT
from ...errno import GuestErrno
from ...process.proc import INIT_PID
from ..kinds import K
from ..registry import syscall
from .process_vm import _may_attach


@syscall("get_robust_list", args=(("pid", K.PID), ("head_ptr", K.PTR), ("len_ptr", K.PTR)))
def sys_get_robust_list(ctx, pid, head_ptr, len_ptr):
    proc, thread = _thread(ctx, ctx.int32(pid))
    creds = proc.creds if proc is not None else ROOT
    if proc is not ctx.proc and not _may_attach(ctx.proc.creds, creds):
        raise GuestErrno(E.EPERM)
    ctx.write_word(len_ptr, 3 * ctx.word)           # sizeof(struct robust_list_head)
    ctx.write_word(head_ptr, thread.robust_list if thread is not None else 0)
    return 0


def _thread(ctx, pid: int):
    """(process, thread) of the caller for 0, else of the thread with that id (find_task_by_vpid);
    (None, None) for the virtual init."""
    if pid == 0:
        return ctx.proc, ctx.thread
    pid = global_pid(ctx.proc, pid)                 # of the caller's pid namespace
    for proc in ctx.kernel.processes.values():
        for thread in proc.threads:
            if thread.tid == pid:
                return proc, thread
    if pid == INIT_PID:
        return None, None
    raise GuestErrno(E.ESRCH)
