"""A request from the host to stop every guest run: Ctrl-C, SIGTERM, or trapline's own output gone.

A host signal must end a run wherever the guest is, and a guest that makes no system call can
stay inside one `uc_emu_start` for as long as it runs: Python runs a signal handler only
between bytecodes of the main thread, so a handler that merely set a flag would wait for the
guest's next call or exit (a compute loop ignored SIGINT until SIGKILL). So a request does two
things:
  - it is remembered (`pending()`), and every Machine.run() raises StopRequested when it
    returns (or before it starts) while one is pending: every loop that runs the guest, the
    kernel's run loop, the profiling timer's, a debugger's step, ends at once, at a slice
    boundary, where the kernel's state is whole;
  - it asks Unicorn to leave the run now (uc_emu_stop, which Unicorn documents as callable
    from another thread: it sets the CPU's exit request, checked at every translated block).
`request()` may come from another host thread (the CLI's signal watcher, trapline/host_signals.py),
since a thread blocked in emu_start runs no Python; uc_emu_start clears a stop asked before it
began (uc.c: `uc->stop_request = false`), so such a caller repeats `stop_running()` until the
request is taken (`taken()`).

A host call that blocks (a read of the host's stdin) is the other place a guest run can wait
for ever: inside `blocking()` the main thread's own request raises StopRequested at once, out
of the interrupted call (PEP 475 retries it otherwise).

The request is process-wide, as a host signal is: it stays pending until `clear()` (tests and
library users that go on running guests after one).
"""
from __future__ import annotations

import threading
from contextlib import contextmanager

from .errors import TraplineError


class StopRequested(TraplineError):
    """The host asked every guest run to end (`signal`: the host signal that asked, SIGPIPE for
    an output that went away). Not a kernel bug: it passes the run loop's panic net."""

    def __init__(self, signal: int):
        super().__init__(f"stopped by host signal {signal}")
        self.signal = signal


_lock = threading.RLock()          # (the main thread's signal handler may run inside a holder)
_requested: int | None = None         # the first request's signal
_taken = False                        # a Machine.run raised it: the guest runs no more
_running: list = []                   # Machines inside uc_emu_start (a run may nest one)
_blocking = 0                         # depth of blocking() in the main thread


def request(signal: int) -> None:
    """Ask every guest run to end (the first request's signal is kept). From the main thread
    inside `blocking()`, raises StopRequested out of the blocked host call."""
    global _requested
    with _lock:
        if _requested is None:
            _requested = signal
    stop_running()
    if _blocking and threading.current_thread() is threading.main_thread():
        raise_if_pending()


def pending() -> int | None:
    """The signal of the request not yet cleared, or None."""
    return _requested


def taken() -> bool:
    """Whether a run has ended for the request (nothing more needs stopping)."""
    return _taken


def clear() -> None:
    global _requested, _taken
    with _lock:
        _requested, _taken = None, False


def stop_running() -> None:
    """uc_emu_stop on every Machine inside emu_start (safe from any host thread)."""
    for machine in list(_running):
        machine.uc.emu_stop()


def raise_if_pending() -> None:
    global _taken
    if _requested is not None:
        _taken = True
        raise StopRequested(_requested)


def enter(machine) -> None:
    """`machine` goes into emu_start (Machine.run): a request from now on stops it; a pending
    one raises now. (list.append and .remove are atomic under the GIL: no lock per slice.)"""
    _running.append(machine)
    if _requested is not None:
        _running.remove(machine)
        raise_if_pending()


def leave(machine) -> None:
    """`machine` is out of emu_start; the caller then calls raise_if_pending() once its own
    accounting of the run is done."""
    _running.remove(machine)


@contextmanager
def blocking():
    """A host call that may block for ever (a read of the host's stdin): a request from the
    main thread's signal handler raises StopRequested out of it (module docstring)."""
    global _blocking
    main = threading.current_thread() is threading.main_thread()
    if main:
        _blocking += 1
    try:
        raise_if_pending()
        yield
    finally:
        if main:
            _blocking -= 1
