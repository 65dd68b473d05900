"""pidfd_open, pidfd_send_signal, pidfd_getfd (kernel/pid.c, kernel/signal.c).

pidfd_open gives a close-on-exec file referring to a process (fs/pidfd.py): a process's pid
(a thread's tid is ENOENT without PIDFD_THREAD, which is not modeled: EINVAL), ESRCH when none
has it. pidfd_send_signal signals it as kill(2) would (ESRCH once it has been reaped, EPERM by
check_kill_permission; a siginfo must name the same signal, EINVAL); no flags are modeled.
pidfd_getfd duplicates a descriptor of the process into the caller (close-on-exec), for a
caller that may signal it (EPERM), EBADF for a descriptor it does not have.
"""
import struct

from ... import errno as E
from ...errno import GuestErrno
from ...fs.pidfd import PidFd
from ..kinds import K
from ..registry import syscall
from ...signals.frame import SIGINFO_SIZE
from ...signals.queue_limit import refuse_queue_overflow
from ...signals.sender import sent_by, user_siginfo_seen_by
from .kill import INIT, SI_TKILL, SI_USER, _check_signal, may_signal, post

PIDFD_NONBLOCK = 0o4000                 # O_NONBLOCK


def _process(ctx, nr: int):
    pid = ctx.proc.pid_ns.lookup(nr)                # the caller's pid namespace's number
    proc = ctx.kernel.processes.get(pid)
    if proc is None:
        for other in ctx.kernel.processes.values():
            if any(t.tid == pid for t in other.threads):
                raise GuestErrno(E.ENOENT)      # a thread, not a thread-group leader
        raise GuestErrno(E.ESRCH)
    return proc


@syscall("pidfd_open", args=(("pid", K.PID), ("flags", K.HEX)))
def sys_pidfd_open(ctx, pid, flags):
    pid = ctx.int32(pid)
    if flags & ~PIDFD_NONBLOCK or pid <= 0:
        raise GuestErrno(E.EINVAL)
    proc = _process(ctx, pid)
    return ctx.proc.fds.install(PidFd(proc, bool(flags & PIDFD_NONBLOCK)), cloexec=True)


def _pidfd(ctx, fd: int) -> PidFd:
    f = ctx.proc.fds.get(ctx.int32(fd))
    if not isinstance(f, PidFd):
        raise GuestErrno(E.EBADF)
    return f


def _live(ctx, f: PidFd):
    if ctx.kernel.processes.get(f.process.pid) is not f.process:
        raise GuestErrno(E.ESRCH)               # reaped: the pid is gone (or someone else's)
    return f.process


@syscall("pidfd_send_signal", args=(("pidfd", K.FD), ("sig", K.SIGNAL), ("info", K.PTR),
                                    ("flags", K.HEX)))
def sys_pidfd_send_signal(ctx, pidfd, sig, info, flags):
    if flags:
        raise GuestErrno(E.EINVAL)
    proc = _signal_target(ctx, pidfd)
    sig = ctx.int32(sig)
    _check_signal(sig)
    siginfo = sent_by(ctx.proc, SI_USER)
    if info:
        raw = ctx.read(info, SIGINFO_SIZE)
        signo, _, code = struct.unpack_from("<iii", raw)
        if signo != sig:
            raise GuestErrno(E.EINVAL)
        # only to itself may a caller send a siginfo that claims the kernel or tgkill
        if proc is not ctx.proc and (code >= 0 or code == SI_TKILL):
            raise GuestErrno(E.EPERM)
        if proc is not INIT:
            raw = user_siginfo_seen_by(raw, ctx.word, ctx.proc.creds, proc)
        siginfo = {"raw": raw, "code": code}
    if not may_signal(ctx, proc, sig):
        raise GuestErrno(E.EPERM)
    if sig and proc is not INIT:
        refuse_queue_overflow(ctx.kernel, proc, sig, siginfo["code"])
    post(ctx, proc, sig, siginfo)
    return 0


def _signal_target(ctx, fd: int):
    """pidfd_to_pid: a pidfd's process, or the process a /proc/PID folder stands for
    (tgid_pidfd_to_pid), /proc/1 the virtual init (kill.py); any other file is EBADF; a
    process gone is ESRCH."""
    f = ctx.proc.fds.get(ctx.int32(fd))
    if isinstance(f, PidFd):
        return _live(ctx, f)
    pid = getattr(getattr(f, "node", None), "proc_pid", None)
    if pid is None:
        raise GuestErrno(E.EBADF)
    proc = ctx.kernel.processes.get(pid)
    if proc is None and pid == INIT.pid:
        return INIT
    if proc is None or proc.state == "zombie" and not proc.live_threads():
        raise GuestErrno(E.ESRCH)
    if getattr(f.node, "proc_process", proc) is not proc:
        raise GuestErrno(E.ESRCH)           # its process is gone; another has the pid now
    return proc


@syscall("pidfd_getfd", args=(("pidfd", K.FD), ("targetfd", K.INT), ("flags", K.HEX)))
def sys_pidfd_getfd(ctx, pidfd, targetfd, flags):
    if flags:
        raise GuestErrno(E.EINVAL)
    proc = _live(ctx, _pidfd(ctx, pidfd))
    if not may_signal(ctx, proc, 0):
        raise GuestErrno(E.EPERM)              # ptrace_may_access, as the kill check
    f = proc.fds.get(ctx.int32(targetfd))
    return ctx.proc.fds.install(f, cloexec=True)
