"""A waiting call with a timeout and a temporary signal mask, re-executed from scratch.

poll, ppoll, select and pselect6 sleep by raising WouldBlock; the kernel re-executes them
after a wakeup or when the deadline passes. Two things must survive between executions, as
they survive in Linux's restart_block and current->saved_sigmask:

* the deadline, fixed by the first execution (a re-execution must not restart the timeout);
* for ppoll/pselect6, the caller's own signal mask while the call's temporary mask is in force.

The deadline lives in `thread.restart["timed_wait"]` (a RestartWait keyed by the call's name
and raw arguments), which the dispatcher clears when a call completes and the signal code
clears when a signal ends the sleep. The caller's own mask lives in `thread.saved_sigmask`,
the attribute rt_sigsuspend uses for the same purpose: when a handler interrupts the sleep,
its frame saves that mask for sigreturn to restore (Linux's restore_saved_sigmask_unless());
when the call completes here, the mask is put back and the attribute removed.

Waiting on several files: WouldBlock's channel is then a *list* of channels (a list is never
a channel itself, being unhashable), and a wakeup of any one of them wakes the sleeper.
"""
from dataclasses import dataclass

from ...blocking import WouldBlock
from ...errno import GuestErrno
from .signals import UNBLOCKABLE

RESTART_KEY = "timed_wait"


@dataclass(frozen=True)
class RestartWait:
    key: tuple                        # (syscall name, raw arguments): the call being restarted
    deadline_ns: int | None           # CLOCK_MONOTONIC virtual time; None waits for ever


class TimedWait:
    """One execution of a waiting call. `timeout_ns` None waits for ever, 0 only polls."""

    def __init__(self, ctx, key: tuple, timeout_ns: int | None, sigmask: int | None = None):
        self.thread = ctx.thread
        self.key = key
        self.timeout_ns = timeout_ns
        self.now = ctx.kernel.clock.monotonic_ns()
        previous = self.thread.restart.pop(RESTART_KEY, None)
        if previous is not None and previous.key == key:
            self.deadline = previous.deadline_ns
        else:
            self.deadline = None if timeout_ns is None else self.now + timeout_ns
        if self.thread.saved_sigmask is not None:        # re-executed under a temporary mask
            self.thread.sigmask = self.thread.saved_sigmask
            self.thread.saved_sigmask = None
        self.caller_mask = self.thread.sigmask
        self.temporary_mask = sigmask
        if sigmask is not None:
            self.thread.sigmask = sigmask & ~UNBLOCKABLE

    @property
    def expired(self) -> bool:
        return self.deadline is not None and self.now >= self.deadline

    def remaining_ns(self) -> int:
        return max(0, self.deadline - self.now) if self.deadline is not None else 0

    def run(self, body, on_finish=None):
        """`body(wait)` returns the call's result or calls `wait.sleep()`. When the call
        completes (result or GuestErrno) the restart state goes and `on_finish(wait)` runs
        (the timeout write-back, done by Linux's poll_select_finish() on errors as well)."""
        try:
            result = body(self)
        except WouldBlock:
            raise
        except GuestErrno:
            self._complete(on_finish)
            raise
        self._complete(on_finish)
        return result

    def sleep(self, channels: list, reason: str):
        self.thread.restart[RESTART_KEY] = RestartWait(self.key, self.deadline)
        if self.temporary_mask is not None:
            self.thread.saved_sigmask = self.caller_mask
        raise WouldBlock(list(channels), reason, deadline_ns=self.deadline)

    def _complete(self, on_finish) -> None:
        self.thread.restart.pop(RESTART_KEY, None)
        if self.temporary_mask is not None:
            self.thread.sigmask = self.caller_mask
        if on_finish is not None:
            on_finish(self)
