"""fork, vfork, clone, clone3, wait4, waitpid, waitid (kernel_model/process/fork.py, exit.py do the work)."""
import struct

from ... import errno as E
from ...blocking import WouldBlock
from ...errno import GuestErrno
from ...process.exit import reap
from ...fs.constants import O_NONBLOCK
from ...fs.pidfd import PidFd
from ...process.clone_args import read_clone_args
from ...process.fork import CLONE_PARENT_SETTID, CLONE_PIDFD, CLONE_VFORK, CLONE_VM, do_clone
from ...process.job_control import CLD_CONTINUED, CLD_STOPPED, wait_status
from ...process.proc import ZOMBIE
from ...process.wait_children import children_channel, waiting_for
from ...signals import SIGCHLD
from ...signals.sender import uid_seen_by
from ...time.task_times import reaped_by_wait
from ..kinds import K
from ..registry import syscall
from .rusage import pack_rusage

WNOHANG, WUNTRACED, WEXITED, WCONTINUED, WNOWAIT = 1, 2, 4, 8, 0x01000000
P_ALL, P_PID, P_PGID, P_PIDFD = 0, 1, 2, 3
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
        raise GuestErrno(E.EINVAL)      # kernel_clone: clone(2) has one place for both
    return _clone_with_pidfd(ctx, flags, parent_tid, lambda: do_clone(
        ctx.kernel, ctx, flags, stack, parent_tid, child_tid, tls))


@syscall("clone3", args=(("cl_args", K.STRUCT), ("size", K.ULONG)), outside_hook=True)
def sys_clone3(ctx, args, size):
    a = read_clone_args(ctx, args, size)
    return _clone_with_pidfd(ctx, a.flags, a.pidfd, lambda: do_clone(
        ctx.kernel, ctx, (a.flags & 0xFFFFFFFF) | a.exit_signal, a.stack_top, a.parent_tid,
        a.child_tid, a.tls, set_tid=a.set_tid))


def _clone_with_pidfd(ctx, flags: int, pidfd_addr: int, clone) -> int:
    """CLONE_PIDFD: copy_process stores the new process's pidfd (close-on-exec, O_RDWR) at
    pidfd_addr before the child exists; an address it cannot write is EFAULT and no child."""
    if not flags & CLONE_PIDFD:
        return clone()
    if not ctx.writable(pidfd_addr, 4):
        raise GuestErrno(E.EFAULT)
    pid = clone()
    child = ctx.kernel.processes[ctx.proc.pid_ns.lookup(pid)]
    fd = ctx.proc.fds.install(PidFd(child, False), cloexec=True)
    ctx.write(pidfd_addr, struct.pack("<i", fd))
    return pid


def _selector(proc, pid: int):
    """Which children wait4's `pid` names: numbers of the caller's pid namespace
    (find_get_pid), looked up now, as the selector is kept while the wait sleeps (and asked
    when another process runs)."""
    if pid > 0:
        wanted = proc.pid_ns.lookup(pid)
        return lambda c: c.pid == wanted
    if pid == -1:
        return lambda c: True
    group = proc.pgid if pid == 0 else proc.pid_ns.lookup(-pid)
    return lambda c: c.pgid == group


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


def _wait_block(ctx, what: str, selector):
    waiting_for(ctx.thread, selector)
    return WouldBlock(children_channel(ctx.proc.pid), what)


INT_MIN = -(1 << 31)


def _wait4(ctx, pid, status_ptr, options, rusage):
    pid = ctx.int32(pid)
    if options & ~(WNOHANG | WUNTRACED | WCONTINUED | 0x20000000 | 0x40000000 | 0x80000000):
        raise GuestErrno(E.EINVAL)
    if pid == INT_MIN:
        raise GuestErrno(E.ESRCH)     # -INT_MIN is no process group (kernel_wait4: ESRCH)
    selector = _selector(ctx.proc, pid)
    found = _find_waitable(ctx, selector, options | WEXITED)
    if found is None:
        if options & WNOHANG:
            return 0
        raise _wait_block(ctx, f"wait4({pid})", selector)
    child, report = found
    nr = ctx.proc.pid_ns.nr(child.pid)                # before the reap frees its numbers
    if status_ptr:
        ctx.write(status_ptr, struct.pack("<i", child.exit_status if report is None
                                          else wait_status(report)))
    if rusage:                        # getrusage(p, RUSAGE_BOTH) of the child (wait_task_zombie)
        ctx.write(rusage, pack_rusage(ctx, child.utime_ns + child.cutime_ns,
                                      child.stime_ns + child.cstime_ns, 0))
    if report is None:
        reaped_by_wait(ctx.proc, child)
        reap(ctx.kernel, child)
    else:
        child.stop_report = None                      # reported once
    return nr


@syscall("wait4", args=(("pid", K.PID), ("wstatus", K.WSTATUS_OUT), ("options", K.WAIT_OPTIONS),
                        ("rusage", K.STRUCT)))
def sys_wait4(ctx, pid, status, options, rusage):
    return _wait4(ctx, pid, status, options, rusage)


@syscall("waitpid")
def sys_waitpid(ctx, pid, status, options):
    return _wait4(ctx, pid, status, options, 0)


def _waitid_selector(ctx, idtype: int, ident: int):
    """kernel_waitid's id types: (which children, whether a O_NONBLOCK pidfd named them).
    P_PIDFD names its process by a pidfd (pidfd_get_pid: EBADF for any other fd)."""
    if idtype == P_PIDFD:
        if ident < 0:
            raise GuestErrno(E.EINVAL)
        f = ctx.proc.fds.get(ident)
        if not isinstance(f, PidFd):
            raise GuestErrno(E.EBADF)
        target = f.process
        return (lambda c: c is target), bool(f.flags & O_NONBLOCK)
    ns, proc = ctx.proc.pid_ns, ctx.proc           # (ctx is the running call's, not kept)
    wanted = ns.lookup(ident)
    group = wanted if ident else proc.pgid
    return {P_ALL: lambda c: True, P_PID: lambda c: c.pid == wanted,
            P_PGID: lambda c: c.pgid == group}[idtype], False


@syscall("waitid", args=(("idtype", K.WAITID_TYPE), ("id", K.PID), ("infop", K.STRUCT),
                         ("options", K.WAIT_OPTIONS), ("rusage", K.STRUCT)))
def sys_waitid(ctx, idtype, ident, infop, options, rusage):
    if options & ~(WNOHANG | WUNTRACED | WEXITED | WCONTINUED | WNOWAIT | 0xE0000000) or \
            not options & (WEXITED | WUNTRACED | WCONTINUED) or idtype not in (P_ALL, P_PID, P_PGID, P_PIDFD):
        raise GuestErrno(E.EINVAL)
    ident = ctx.int32(ident)
    selector, nonblocking = _waitid_selector(ctx, idtype, ident)
    found = _find_waitable(ctx, selector, options)
    if found is None:
        # kernel_waitid: an O_NONBLOCK pidfd waits as WNOHANG does, but says EAGAIN where
        # WNOHANG says 0
        if options & WNOHANG or nonblocking:
            if infop:
                ctx.write(infop, bytes(128))     # si_pid = 0: nothing to report
            if not options & WNOHANG:
                raise GuestErrno(E.EAGAIN)
            return 0
        raise _wait_block(ctx, "waitid", selector)
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
        # the child's real uid as the waiter's user namespace numbers it (wait_task_zombie,
        # wait_task_stopped, wait_task_continued: from_kuid_munged(current_user_ns(), task_uid))
        body = struct.pack("<iIi", ctx.proc.pid_ns.nr(child.pid), uid_seen_by(ctx.proc, child.creds.uid),
                           value)
        ctx.write(infop, (head + body).ljust(128, b"\0"))
    if not options & WNOWAIT:
        if report is None:
            reaped_by_wait(ctx.proc, child)
            reap(ctx.kernel, child)
        else:
            child.stop_report = None
    return 0
