"""Sending signals: kill, tgkill, tkill (kill(2): pid > 0, 0 = own group, -1 = all, < -1 = group).

Pid 1 is the sandbox's virtual init: root's, in none of the guest's sessions. It can be named
(kill(1, ...), a pidfd of /proc/1), so the sender's right is checked as for any process (EPERM
for a user without CAP_KILL, not ESRCH), and a signal it is allowed is dropped: an init
ignores every signal it has no handler for (SIGNAL_UNKILLABLE, kernel/signal.c
sig_task_ignored). kill(-1, ...) never reaches it.
"""
from ... import errno as E
from ...creds import ROOT
from ...errno import GuestErrno
from ...landlock.hooks import may_signal as landlock_may_signal
from ...process.proc import INIT_PID, ZOMBIE
from ...signals import NSIG
from ...signals.queue_limit import refuse_queue_overflow
from ...signals.sender import sent_by
from ..kinds import K
from ..registry import syscall

SI_USER, SI_TKILL = 0, -6
SIGCONT, CAP_KILL = 18, 5
SIGKILL, SIGSTOP = 9, 19


class VirtualInit:
    """The sandbox's init as a signal's target (no task of the run: Landlock's signal scope
    sees it as outside every domain)."""
    pid, sid, pgid, creds = INIT_PID, 0, 0, ROOT
    threads = ()


INIT = VirtualInit()


def post(ctx, target, sig: int, info: dict) -> None:
    """Queue `sig` for `target`; the virtual init drops it, and so does the init of a pid
    namespace a signal it has no handler for, unless SIGKILL or SIGSTOP comes from an
    ancestor namespace (kernel/signal.c sig_task_ignored: SIGNAL_UNKILLABLE, `force`)."""
    if not sig or target is INIT:
        return
    if target.pid_ns.reaper == target.pid and target.sigactions.get(sig, (0,))[0] == 0:
        from_outside = not target.pid_ns.contains(ctx.proc.pid)
        if not (from_outside and sig in (SIGKILL, SIGSTOP)):
            return
    ctx.kernel.signals.post(target, sig, info=info)


def may_signal(ctx, target, sig: int) -> bool:
    """kernel/signal.c check_kill_permission: the sender's real or effective uid is the
    target's real or saved one, or CAP_KILL; SIGCONT within the session is always allowed;
    then the LSMs (a signal within one thread group is never scoped)."""
    mine, theirs = ctx.proc.creds, target.creds
    if not ({mine.uid, mine.euid} & {theirs.uid, theirs.suid} or mine.capable(CAP_KILL)
            or sig == SIGCONT and target.sid == ctx.proc.sid):
        return False
    # then security_task_kill: Landlock's LANDLOCK_SCOPE_SIGNAL (task.c hook_task_kill)
    leader = target.threads[0] if target.threads else None
    return target is ctx.proc or landlock_may_signal(ctx.thread, leader)


def _check_signal(sig: int) -> None:
    if not 0 <= sig <= NSIG:
        raise GuestErrno(E.EINVAL)


def _targets(ctx, pid: int) -> list:
    # A zombie not yet reaped still holds its pid: kill succeeds and the signal is dropped
    # (Linux: its task is still hashed until release_task; signals.post ignores zombies).
    # The numbers are the caller's pid namespace's (find_vpid); -1 reaches the processes it
    # sees but its init (task_pid_vnr(p) > 1).
    ns = ctx.proc.pid_ns
    procs = sorted((p for p in ctx.kernel.processes.values() if ns.contains(p.pid)),
                   key=lambda p: p.pid)
    if pid > 0:
        # kill_proc_info looks `pid` up among all tasks (find_vpid): a thread's id names its
        # whole thread group, as its process id does (kernel/signal.c kill_pid_info)
        wanted = ns.lookup(pid)
        found = [p for p in procs if p.pid == wanted or any(t.tid == wanted for t in p.threads)][:1]
        return found or ([INIT] if pid == INIT_PID and ns.initial else [])
    if pid == 0:
        return [p for p in procs if p.pgid == ctx.proc.pgid]
    if pid == -1:
        return [p for p in procs if p is not ctx.proc and ns.nr(p.pid) > 1] or [ctx.proc]
    return [p for p in procs if p.pgid == ns.lookup(-pid)]


@syscall("kill", args=(("pid", K.PID), ("sig", K.SIGNAL)))
def sys_kill(ctx, pid, sig):
    sig = ctx.int32(sig)
    _check_signal(sig)
    targets = _targets(ctx, ctx.int32(pid))
    if not targets:
        raise GuestErrno(E.ESRCH)
    allowed = [proc for proc in targets if may_signal(ctx, proc, sig)]
    if not allowed:
        raise GuestErrno(E.EPERM)         # a group: EPERM only when no member could be sent it
    for proc in allowed:
        post(ctx, proc, sig, sent_by(ctx.proc, SI_USER))
    return 0


def _thread(ctx, tid: int, tgid: int | None):
    ns = ctx.proc.pid_ns
    tid, tgid = ns.lookup(tid), (None if tgid is None else ns.lookup(tgid) or -1)
    for proc in ctx.kernel.processes.values():
        if tgid is not None and proc.pid != tgid:
            continue
        for t in proc.threads:
            if t.tid == tid and t.state != ZOMBIE:
                return t
    raise GuestErrno(E.ESRCH)


@syscall("tgkill", args=(("tgid", K.PID), ("tid", K.PID), ("sig", K.SIGNAL)))
def sys_tgkill(ctx, tgid, tid, sig):
    sig, tgid, tid = ctx.int32(sig), ctx.int32(tgid), ctx.int32(tid)
    if tid <= 0 or tgid <= 0:
        raise GuestErrno(E.EINVAL)            # sys_tgkill: no group or "all" ids here
    _check_signal(sig)
    thread = _thread(ctx, tid, tgid)
    if not may_signal(ctx, thread.process, sig):
        raise GuestErrno(E.EPERM)
    if sig:
        refuse_queue_overflow(ctx.kernel, thread.process, sig, SI_TKILL)
    ctx.kernel.signals.post(thread.process, sig, thread=thread, info=sent_by(ctx.proc, SI_TKILL))
    return 0


@syscall("tkill", args=(("tid", K.PID), ("sig", K.SIGNAL)))
def sys_tkill(ctx, tid, sig):
    sig, tid = ctx.int32(sig), ctx.int32(tid)
    if tid <= 0:
        raise GuestErrno(E.EINVAL)            # sys_tkill
    _check_signal(sig)
    thread = _thread(ctx, tid, None)
    if not may_signal(ctx, thread.process, sig):
        raise GuestErrno(E.EPERM)
    if sig:
        refuse_queue_overflow(ctx.kernel, thread.process, sig, SI_TKILL)
    ctx.kernel.signals.post(thread.process, sig, thread=thread, info=sent_by(ctx.proc, SI_TKILL))
    return 0
