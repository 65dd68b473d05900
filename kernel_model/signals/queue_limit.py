"""RLIMIT_SIGPENDING: how many signals a user may have queued (Linux kernel/signal.c).

Linux allocates a struct sigqueue for every signal it queues with its siginfo, counted per user
(ucounts' UCOUNT_RLIMIT_SIGPENDING) against the target's RLIMIT_SIGPENDING
(__sigqueue_alloc). When the allocation is refused, __send_signal_locked still sends a classic
signal (or one from kill(), si_code SI_USER) without its siginfo, but a real-time signal sent
with a siginfo of its own (tgkill's SI_TKILL, sigqueue's SI_QUEUE) fails with EAGAIN: "queue
overflow, abort". The user's queued signals are counted as the classic signals pending (a bit
each) and the real-time signals queued (an entry each: delivery.py) of all of that user's
processes and threads.
"""
from .. import errno as E
from ..errno import GuestErrno
from .numbers import SIGRTMIN

RLIMIT_SIGPENDING = 11
SI_USER = 0


def _queued_by_user(kernel, uid: int) -> int:
    count = 0
    for proc in kernel.processes.values():
        if proc.creds.uid != uid:
            continue
        classic = (1 << (SIGRTMIN - 1)) - 1
        count += bin(proc.pending_signals & classic).count("1")
        count += sum(bin(t.pending_signals & classic).count("1") for t in proc.threads)
        count += sum(len(queue) for queue in proc.rt_queue.values())
    return count


def refuse_queue_overflow(kernel, target, sig: int, code: int) -> None:
    """EAGAIN when `sig`, a real-time signal sent to process `target` with a siginfo whose
    si_code is `code`, finds its user's queue full (__send_signal_locked's
    TRACE_SIGNAL_OVERFLOW_FAIL); classic signals and kill()'s are never refused."""
    if sig < SIGRTMIN or code == SI_USER:
        return
    limit = target.rlimits.get(RLIMIT_SIGPENDING)
    if limit is None:
        return                                   # never lowered: Linux's default is thousands
    if _queued_by_user(kernel, target.creds.uid) >= limit[0]:
        raise GuestErrno(E.EAGAIN)
