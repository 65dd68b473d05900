"""fork, vfork, clone, clone3, wait4, waitpid, waitid (kernel_model/process/fork.py, exit.py do the work)."""
import struct

from ... import errno as E
from ...blocking import WouldBlock
from ...errno import GuestErrno
from ...process.exit import reap
from ...fs.pidfd import PidFd
from ...process.fork import (CLONE_DETACHED, CLONE_PARENT, CLONE_PARENT_SETTID, CLONE_PIDFD,
                             CLONE_THREAD, CLONE_VFORK, CLONE_VM, CSIGNAL, do_clone)
from ...process.job_control import CLD_CONTINUED, CLD_STOPPED, wait_status
from ...process.proc import ZOMBIE
from ...signals import SIGCHLD
from ..kinds import K
from ..registry import syscall

WNOHANG, WUNTRACED, WEXITED, WCONTINUED, WNOWAIT = 1, 2, 4, 8, 0x01000000
P_ALL, P_PID, P_PGID = 0, 1, 2
CLD_EXITED, CLD_KILLED, CLD_DUMPED = 1, 2, 3


@syscall("fork", args=(), outside_hook=True)
def sys_fork(ctx):
    return do_clone(ctx.kernel, ctx, SIGCHLD, 0, 0, 0, 0)


@syscall("vfork", args=(), outside_hook=True)
def sys_vfork(ctx):
    return do_clone(ctx.kernel, ctx, CLONE_VM | CLONE_VFORK | SIGCHLD, 0, 0, 0, 0)


@syscall("clone", args=(("flags", K.HEX), ("stack", K.PTR), ("parent_tid", K.PTR),
                        ("tid_or_tls", K.PTR), ("tls_or_tid", K.PTR)), outside_hook=True)
def sys_clone(ctx, flags, stack, parent_tid, arg4, arg5):
    # x86-64: clone(flags, stack, parent_tid, child_tid, tls); i386: (flags, stack, parent_tid, tls, child_tid)
    child_tid, tls = (arg4, arg5) if ctx.abi == "x86_64" else (arg5, arg4)
    flags &= 0xFFFFFFFF
    if flags & CLONE_PIDFD and flags & CLONE_PARENT_SETTID:
        raise GuestErrno(E.EINVAL)            # kernel/fork.c: clone() has one pointer for both
    return _clone(ctx, flags, stack, parent_tid, child_tid, tls, pidfd=parent_tid)


# struct clone_args (include/uapi/linux/sched.h): flags, pidfd, child_tid, parent_tid,
# exit_signal, stack, stack_size, tls, set_tid, set_tid_size, cgroup (u64 each)
CLONE_ARGS_SIZE_VER0, CLONE_ARGS_SIZE = 64, 88
PAGE_SIZE, MAX_PID_NS_LEVEL, NSIG = 4096, 32, 64


@syscall("clone3", args=(("cl_args", K.STRUCT), ("size", K.ULONG)), outside_hook=True)
def sys_clone3(ctx, args, size):
    """kernel/fork.c copy_clone_args_from_user and clone3_args_valid, in their order."""
    if size > PAGE_SIZE:
        raise GuestErrno(E.E2BIG)
    if size < CLONE_ARGS_SIZE_VER0:
        raise GuestErrno(E.EINVAL)
    if size > CLONE_ARGS_SIZE and any(ctx.read(args + CLONE_ARGS_SIZE, size - CLONE_ARGS_SIZE)):
        raise GuestErrno(E.E2BIG)             # copy_struct_from_user: unknown fields not zero
    raw = ctx.read(args, min(size, CLONE_ARGS_SIZE)).ljust(CLONE_ARGS_SIZE, b"\0")
    (flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid,
     set_tid_size, _cgroup) = struct.unpack("<11Q", raw)
    if bool(set_tid) != bool(set_tid_size) or set_tid_size > MAX_PID_NS_LEVEL:
        raise GuestErrno(E.EINVAL)
    if exit_signal & ~CSIGNAL or exit_signal > NSIG or flags >> 32:
        raise GuestErrno(E.EINVAL)
    if flags & (CLONE_THREAD | CLONE_PARENT) and exit_signal:
        raise GuestErrno(E.EINVAL)
    if not _stack_valid(ctx, stack, stack_size):
        raise GuestErrno(E.EINVAL)
    top = stack + stack_size if stack else 0       # clone3 gives the lowest address and size
    return _clone(ctx, flags | exit_signal, top, parent_tid, child_tid, tls, pidfd=pidfd)


def _stack_valid(ctx, stack: int, size: int) -> bool:
    """clone3_stack_valid: a stack has a size and lies in user space; no stack, no size."""
    if stack:
        return bool(size) and ctx.access_ok(stack, size)
    return not size


def _clone(ctx, flags: int, stack: int, parent_tid: int, child_tid: int, tls: int, *,
           pidfd: int) -> int:
    """do_clone, and with CLONE_PIDFD a pidfd of the child in the caller's table (O_CLOEXEC)
    whose number is stored at `pidfd` (copy_process: a bad pointer is EFAULT and no child is
    made; a thread or a detached child gets none: EINVAL)."""
    if flags & CLONE_PIDFD:
        if flags & (CLONE_DETACHED | CLONE_THREAD):
            raise GuestErrno(E.EINVAL)
        if not ctx.writable(pidfd, 4):
            raise GuestErrno(E.EFAULT)
    pid = do_clone(ctx.kernel, ctx, flags, stack, parent_tid, child_tid, tls)
    if flags & CLONE_PIDFD:
        fd = ctx.proc.fds.install(PidFd(ctx.kernel.processes[pid], False), cloexec=True)
        ctx.write(pidfd, struct.pack("<i", fd))
    return pid


def _matches(ctx, child, pid: int) -> bool:
    if pid > 0:
        return child.pid == pid
    if pid == -1:
        return True
    if pid == 0:
        return child.pgid == ctx.proc.pgid
    return child.pgid == -pid


def _find_waitable(ctx, selector, options: int):
    """do_wait's pick among the matching children (ECHILD if none): a zombie if WEXITED, a
    stopped one with a report if WSTOPPED, a continued one if WCONTINUED (job_control.py).
    (child, stop report or None), or None when none is ready."""
    candidates = [c for c in ctx.proc.children if selector(c)]
    if not candidates:
        raise GuestErrno(E.ECHILD)
    for child in candidates:
        report = child.stop_report
        if child.state == ZOMBIE:
            if options & WEXITED:
                return child, None
        elif report is not None and (options & WUNTRACED and report[0] == CLD_STOPPED
                                     or options & WCONTINUED and report[0] == CLD_CONTINUED):
            return child, report
    return None


def _wait_block(ctx, what: str):
    return WouldBlock(("children", ctx.proc.pid), what)


INT_MIN = -(1 << 31)


def _wait4(ctx, pid, status_ptr, options, rusage):
    pid = ctx.int32(pid)
    if options & ~(WNOHANG | WUNTRACED | WCONTINUED | 0x20000000 | 0x40000000 | 0x80000000):
        raise GuestErrno(E.EINVAL)
    if pid == INT_MIN:
        raise GuestErrno(E.ESRCH)     # -INT_MIN is no process group (kernel_wait4: ESRCH)
    found = _find_waitable(ctx, lambda c: _matches(ctx, c, pid), options | WEXITED)
    if found is None:
        if options & WNOHANG:
            return 0
        raise _wait_block(ctx, f"wait4({pid})")
    child, report = found
    if status_ptr:
        ctx.write(status_ptr, struct.pack("<i", child.exit_status if report is None
                                          else wait_status(report)))
    if rusage:
        ctx.write(rusage, bytes(18 * ctx.word))      # struct rusage: 2 timevals + 14 longs
    if report is None:
        reap(ctx.kernel, child)
    else:
        child.stop_report = None                      # reported once
    return child.pid


@syscall("wait4", args=(("pid", K.PID), ("wstatus", K.WSTATUS_OUT), ("options", K.WAIT_OPTIONS),
                        ("rusage", K.STRUCT)))
def sys_wait4(ctx, pid, status, options, rusage):
    return _wait4(ctx, pid, status, options, rusage)


@syscall("waitpid")
def sys_waitpid(ctx, pid, status, options):
    return _wait4(ctx, pid, status, options, 0)


@syscall("waitid", args=(("idtype", K.WAITID_TYPE), ("id", K.PID), ("infop", K.STRUCT),
                         ("options", K.WAIT_OPTIONS), ("rusage", K.STRUCT)))
def sys_waitid(ctx, idtype, ident, infop, options, rusage):
    if options & ~(WNOHANG | WUNTRACED | WEXITED | WCONTINUED | WNOWAIT | 0xE0000000) or \
            not options & (WEXITED | WUNTRACED | WCONTINUED) or idtype not in (P_ALL, P_PID, P_PGID):
        raise GuestErrno(E.EINVAL)
    ident = ctx.int32(ident)
    selector = {P_ALL: lambda c: True, P_PID: lambda c: c.pid == ident,
                P_PGID: lambda c: c.pgid == (ident or ctx.proc.pgid)}[idtype]
    found = _find_waitable(ctx, selector, options)
    if found is None:
        if options & WNOHANG:
            if infop:
                ctx.write(infop, bytes(128))     # si_pid = 0: nothing to report
            return 0
        raise _wait_block(ctx, "waitid")
    child, report = found
    if report is not None:
        code, value = report
    elif child.exit_status & 0x7F:
        status = child.exit_status
        code, value = (CLD_DUMPED if status & 0x80 else CLD_KILLED), status & 0x7F
    else:
        code, value = CLD_EXITED, (child.exit_status >> 8) & 0xFF
    if infop:
        # siginfo_t: si_signo, si_errno, si_code, then the union (8-byte aligned on x86-64)
        head = struct.pack("<iii", SIGCHLD, 0, code) + (b"\0" * 4 if ctx.word == 8 else b"")
        body = struct.pack("<iIi", child.pid, 0, value)
        ctx.write(infop, (head + body).ljust(128, b"\0"))
    if not options & WNOWAIT:
        if report is None:
            reap(ctx.kernel, child)
        else:
            child.stop_report = None
    return 0
