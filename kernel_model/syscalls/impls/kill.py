"""kill/tgkill/tkill for the calling process itself (other processes come with issue 3).

Signal 0 only checks that the target exists (kill(2)). A signal sent to oneself takes its
default action unless it is ignored; caught signals are recorded as pending until delivery
exists, so a handler-installing program is not killed by its own signal.
"""
from ... import errno as E
from ...errno import GuestErrno
from ...signals import IGNORED_BY_DEFAULT, NSIG
from ..registry import syscall

SIG_DFL, SIG_IGN = 0, 1


def _send_to_self(ctx, sig: int) -> int:
    if not 0 <= sig <= NSIG:
        raise GuestErrno(E.EINVAL)
    if sig == 0:
        return 0
    handler = ctx.proc.sigactions.get(sig, (SIG_DFL,))[0]
    if handler == SIG_IGN or (handler == SIG_DFL and sig in IGNORED_BY_DEFAULT):
        return 0
    if handler == SIG_DFL:
        ctx.kernel.kill(ctx.proc, sig)
        return 0
    ctx.proc.pending_signals = getattr(ctx.proc, "pending_signals", 0) | (1 << (sig - 1))
    return 0


def _target_is_self(ctx, pid: int) -> bool:
    pid = ctx.int32(pid)
    return pid in (0, -1, ctx.proc.pid, -ctx.proc.pgid)


@syscall("kill", outside_hook=True)
def sys_kill(ctx, pid, sig):
    if not _target_is_self(ctx, pid):
        raise GuestErrno(E.ESRCH)
    return _send_to_self(ctx, ctx.int32(sig))


@syscall("tgkill", outside_hook=True)
def sys_tgkill(ctx, tgid, tid, sig):
    if ctx.int32(tgid) != ctx.proc.pid or ctx.int32(tid) != ctx.thread.tid:
        raise GuestErrno(E.ESRCH)
    return _send_to_self(ctx, ctx.int32(sig))


@syscall("tkill", outside_hook=True)
def sys_tkill(ctx, tid, sig):
    if ctx.int32(tid) != ctx.thread.tid:
        raise GuestErrno(E.ESRCH)
    return _send_to_self(ctx, ctx.int32(sig))
