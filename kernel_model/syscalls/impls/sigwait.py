"""Waiting for a signal and queueing one with its siginfo: rt_sigtimedwait (sigwait,
sigwaitinfo and sigtimedwait in libc) and rt_sigqueueinfo/rt_tgsigqueueinfo (sigqueue).

rt_sigtimedwait takes a pending signal of its set without running its handler (Linux
kernel/signal.c do_sigtimedwait). While it sleeps, the set is blocked (a temporary mask, kept
as ppoll's is: timedwait.py), so that a signal of the set arriving meanwhile stays pending
for the call to take when it runs again instead of being delivered; posting one wakes the
sleeper (signals/delivery.py, SIGWAIT_KEY). Linux unblocks the set instead and dequeues in
the call itself; the outcome the program sees is the same.
"""
import struct

from ... import errno as E
from ...errno import GuestErrno
from ...signals.delivery import SIGWAIT_KEY, UNBLOCKABLE
from ...signals.frame import SIGINFO_SIZE, siginfo_of
from ...signals import NSIG
from ...signals.queue_limit import refuse_queue_overflow
from ...signals.sender import user_siginfo_seen_by
from ..kinds import K
from ..registry import syscall
from .kill import _targets, _thread
from .timedwait import TimedWait

SI_TKILL = -6
SIGSET_SIZE = 8


@syscall("rt_sigtimedwait", args=(("set", K.SIGSET_IN), ("info", K.STRUCT),
                                  ("timeout", K.TIMESPEC_IN), ("sigsetsize", K.ULONG)))
def sys_rt_sigtimedwait(ctx, set_ptr, info_ptr, timeout_ptr, sigsetsize):
    return _sigtimedwait(ctx, set_ptr, info_ptr, timeout_ptr, sigsetsize,
                         "<ii" if ctx.word == 4 else "<qq")


@syscall("rt_sigtimedwait_time64", args=(("set", K.SIGSET_IN), ("info", K.STRUCT),
                                         ("timeout", K.TIMESPEC64_IN), ("sigsetsize", K.ULONG)))
def sys_rt_sigtimedwait_time64(ctx, set_ptr, info_ptr, timeout_ptr, sigsetsize):
    return _sigtimedwait(ctx, set_ptr, info_ptr, timeout_ptr, sigsetsize, "<qq")


def _sigtimedwait(ctx, set_ptr, info_ptr, timeout_ptr, sigsetsize, timespec: str) -> int:
    if sigsetsize != SIGSET_SIZE:
        raise GuestErrno(E.EINVAL)
    # SIGKILL and SIGSTOP cannot be waited for (do_sigtimedwait removes them)
    wanted = struct.unpack("<Q", ctx.read(set_ptr, SIGSET_SIZE))[0] & ~UNBLOCKABLE
    timeout_ns = _timeout(ctx, timeout_ptr, timespec) if timeout_ptr else None
    key = ("rt_sigtimedwait", set_ptr, timeout_ptr)
    thread = ctx.thread

    def body(wait: TimedWait) -> int:
        if (thread.pending_signals | ctx.proc.pending_signals) & wanted:
            sig, info = ctx.kernel.signals.dequeue(thread, wanted)
            if info_ptr:
                ctx.write(info_ptr, siginfo_of(ctx.word, sig, info))
            return sig
        if wait.expired or timeout_ns == 0:
            raise GuestErrno(E.EAGAIN)
        thread.restart[SIGWAIT_KEY] = wanted
        wait.sleep([("sigwait", thread.tid)], "rt_sigtimedwait")

    mask = None if not wanted else thread.sigmask | wanted
    return TimedWait(ctx, key, timeout_ns, mask if thread.saved_sigmask is None
                     else thread.saved_sigmask | wanted).run(body)


def _timeout(ctx, addr: int, fmt: str) -> int:
    sec, nsec = struct.unpack(fmt, ctx.read(addr, struct.calcsize(fmt)))
    if sec < 0 or not 0 <= nsec < 10**9:
        raise GuestErrno(E.EINVAL)
    return sec * 10**9 + nsec


@syscall("rt_sigqueueinfo", args=(("tgid", K.PID), ("sig", K.SIGNAL), ("info", K.STRUCT)))
def sys_rt_sigqueueinfo(ctx, tgid, sig, info_ptr):
    pid, sig = ctx.int32(tgid), ctx.int32(sig)
    info = _user_siginfo(ctx, pid, sig, info_ptr)
    # POSIX.1b does not mention process groups: only pid > 0, any task's id (kill_proc_info)
    targets = _targets(ctx, pid) if pid > 0 else []
    if not targets:
        raise GuestErrno(E.ESRCH)
    if sig:
        refuse_queue_overflow(ctx.kernel, targets[0], sig, info["code"])
    ctx.kernel.signals.post(targets[0], sig, info=_seen_by(ctx, info, targets[0]))
    return 0


@syscall("rt_tgsigqueueinfo", args=(("tgid", K.PID), ("tid", K.PID), ("sig", K.SIGNAL),
                                    ("info", K.STRUCT)))
def sys_rt_tgsigqueueinfo(ctx, tgid, tid, sig, info_ptr):
    tgid, tid, sig = ctx.int32(tgid), ctx.int32(tid), ctx.int32(sig)
    if tgid <= 0 or tid <= 0:
        raise GuestErrno(E.EINVAL)
    info = _user_siginfo(ctx, tid, sig, info_ptr)
    thread = _thread(ctx, tid, tgid)
    if sig:
        refuse_queue_overflow(ctx.kernel, thread.process, sig, info["code"])
    ctx.kernel.signals.post(thread.process, sig, thread=thread, info=_seen_by(ctx, info, thread.process))
    return 0


def _user_siginfo(ctx, target: int, sig: int, info_ptr: int) -> dict | None:
    """The caller's siginfo, checked as do_rt_sigqueueinfo does: not even root may pretend to
    be the kernel (si_code >= 0) or kill/tgkill (SI_TKILL) towards another process."""
    raw = ctx.read(info_ptr, SIGINFO_SIZE)
    if not 0 <= sig <= NSIG:
        raise GuestErrno(E.EINVAL)
    code = struct.unpack_from("<i", raw, 8)[0]
    # (task_pid_vnr(current): the calling thread's own id)
    if (code >= 0 or code == SI_TKILL) and target != ctx.thread.tid:
        raise GuestErrno(E.EPERM)
    return {"raw": raw, "code": code}


def _seen_by(ctx, info: dict, receiver) -> dict:
    """The caller's si_uid as the receiver's user namespace numbers it (sender.py)."""
    if not hasattr(receiver, "creds") or receiver.creds.user_ns is ctx.proc.creds.user_ns:
        return info
    return {**info, "raw": user_siginfo_seen_by(info["raw"], ctx.word, ctx.proc.creds, receiver)}
