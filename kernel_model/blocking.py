"""Sleeping and waking, after xv6's sleep(chan)/wakeup(chan).

A syscall (or a file operation under it) that cannot complete now raises `WouldBlock` naming
the channel it waits on and a human-readable reason. The dispatcher then leaves the call
unfinished, rewinds the thread to the system-call instruction and puts it to sleep on the
channel; `Kernel.wakeup(channel)` makes every sleeper on it runnable again, and the call is
simply executed once more (Linux's -ERESTARTSYS path, without a signal in between). Retrying
from scratch keeps every blocking call correct by construction: it re-checks its condition.

A channel is any hashable object: a pipe, a process (for wait4), a futex address.
"""


class WouldBlock(Exception):
    def __init__(self, channel, reason: str, *, deadline_ns: int | None = None):
        super().__init__(reason)
        self.channel = channel
        self.reason = reason
        self.deadline_ns = deadline_ns     # virtual time at which the sleep times out, if any
        # the call that sleeps, when a multiplexer made it (i386's ipc(2): msgrcv sleeps, whose
        # signals end it as msgrcv's do, not semop's): the thread's blocked_call
        self.call: str | None = None


def nothing_to_read(file, what: str):
    """A read of an empty event queue (inotify, fanotify, timerfd, userfaultfd): EAGAIN on a
    non-blocking description, else the reader sleeps on the file, which its next event wakes."""
    from .errno import EAGAIN, GuestErrno
    from .flags import O_NONBLOCK
    if file.flags & O_NONBLOCK:
        raise GuestErrno(EAGAIN)
    raise WouldBlock(file, f"read on {what}")


class Interrupted(Exception):
    """A sleeping call was interrupted by a signal: it fails with EINTR (or restarts, SA_RESTART)."""


def exit_channel(pid: int) -> tuple:
    """What a waiter on process `pid`'s exit sleeps on (a poll on its pidfd, fs/pidfd.py); the
    exit wakes it (process/exit.py)."""
    return ("exit", pid)


# thread.restart's key for "the waker made this sleeper's condition true" (set by the waker:
# futex_wake, a fifo partner's open, a child's exit for wait4).
CONDITION_MET = "condition_met"


# thread.restart's key for "the tools see the call made again as a new call": a restartable
# call a signal woke and its (ignored) action left to run again (signals/delivery.py).
MADE_AGAIN = "made_again"
# thread.restart's keys for the calls Linux restarts through restart_syscall when no handler
# runs (-ERESTART_RESTARTBLOCK: a relative sleep, poll with a timeout; set by the call as it
# sleeps); MADE_AGAIN is then RESTART_SYSCALL, and SHOWN_RESTARTED marks the call made again
# as the tools see it: restart_syscall, the call Linux makes (kernel/signal.c, arch_do_signal_or_restart
# sets the number to __NR_restart_syscall).
RESTART_BLOCK = "restart_block"
RESTART_SYSCALL = "restart_syscall"
SHOWN_RESTARTED = "shown_restarted"
# thread.restart's key for "the call's entry stop handed the CPU over": a tracer stopping the
# thread at each syscall (debug/events.py stops_at_syscalls) let the others run before the
# call; picked again, the call runs, without a second entry, before any signal is delivered
# (as after a ptrace entry stop: the signal comes on the way back to user mode).
ENTRY_HANDED_OVER = "entry_handed_over"


def completes_first(thread) -> bool:
    """Whether `thread`, woken with its condition met, finishes its call before a pending
    signal is delivered: Linux's ___wait_event (include/linux/wait.h) and do_wait
    (kernel/exit.c) test the condition before signal_pending, so the call returns its result
    and the signal is delivered on the way back to user mode (exit_to_user_mode_loop)."""
    return (thread.blocked_call is not None and thread.restart.get(CONDITION_MET, False)) or \
        thread.restart.get(ENTRY_HANDED_OVER, False)
