"""Ctrl-C, SIGTERM and SIGHUP while a command runs guests: end as strace ends (issue 26).

strace, interrupted (strace.c: interrupt() only notes the signal; the main loop sees it at its
next event; terminate() → cleanup() kills the child it started with that signal and detaches
the others, flushes its output, then restores the default action and raise()s the signal),
dies of the signal that stopped it, so that the shell reports 128+N (130 for SIGINT, 143 for
SIGTERM, 141 for SIGPIPE) and a shell script running it in a loop stops too (a child that
merely exits 130 tells bash that it handled the SIGINT itself). trapline does the same:
  - the first signal asks every guest run to end (emu/host_stop.py): at once, even inside a
    compute loop that never leaves Unicorn, since a watcher thread, woken through Python's
    wakeup fd by the C-level handler, calls uc_emu_stop while the main thread is in emu_start;
  - the command then writes what was recorded (trace records, the -o document, strace lines,
    the profile and its files, the experiment's finished rows), as it would at the guest's exit;
  - and the process dies of that signal (`finish`). A second signal meanwhile kills at once
    (default action restored by the first), the way out if writing takes too long.
SIGQUIT keeps Python's default (a core dump at once), SIGPIPE is ignored as Python sets it: an
output that goes away is an EPIPE where trapline writes (host_output.py), which asks the same stop.
"""
from __future__ import annotations

import functools
import os
import signal
import sys
import threading
import time

from emu import host_stop

HANDLED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
RESTOP_SECONDS = 0.02          # a stop asked between two runs is lost by the next: ask again


def guest_command(command):
    """Decorate a command that runs guests: host signals stop the guest (module docstring),
    closed stdio is made safe first (host_output.py), and the command's end is `finish`."""
    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        from .host_output import guard_stdio
        guard_stdio()
        previous = _install()
        try:
            command(*args, **kwargs)
            code = 0
        except SystemExit as e:
            code = e.code
        except BrokenPipeError:         # a final write of the command's own (host_output.py)
            host_stop.request(signal.SIGPIPE)
            code = 1
        finally:
            _restore(previous)
        finish(code)
    return wrapper


def interruptible():
    """A host wait of a tool's own that the first signal must end (a gdbserver waiting for
    GDB): the wait raises StopRequested (emu/host_stop.blocking). The tools reach no emulator
    module themselves (tests/unit/trapline/test_tools_door.py): host signals are the CLI's."""
    return host_stop.blocking()


def finish(code) -> None:
    """Exit with `code`, or die of the signal that stopped the guests (strace's terminate())."""
    from .host_output import flush_stdio
    flush_stdio()
    stopped = host_stop.pending()
    if stopped is None:
        sys.exit(code)
    die_of(stopped)


def die_of(signum: int) -> None:
    """Die of `signum` with its default action, as strace does; 128+N if it did not kill."""
    signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signum})
    os.kill(os.getpid(), signum)
    os._exit(128 + signum)      # not reached for a signal whose default action is to end


def _install():
    """Handlers for HANDLED, the wakeup fd and its watcher thread; the previous handlers."""
    if threading.current_thread() is not threading.main_thread():
        return None                     # (a command invoked from a thread: Python's signals)
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    # The watcher blocks the handled signals from its first instruction (a thread starts with
    # its creator's mask): the host then delivers them to the main thread, whose blocked host
    # read they must interrupt (host_stop.blocking).
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, set(HANDLED))
    try:
        threading.Thread(target=_watch, args=(read_end,), name="trapline-signals",
                         daemon=True).start()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    previous = {signum: signal.signal(signum, _on_signal) for signum in HANDLED}
    wakeup = signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
    return previous, wakeup, write_end


def _restore(installed) -> None:
    if installed is None:
        return
    previous, wakeup, write_end = installed
    signal.set_wakeup_fd(wakeup)
    for signum, handler in previous.items():
        if signal.getsignal(signum) is _on_signal:
            signal.signal(signum, handler)
    os.close(write_end)                 # the watcher reads EOF and ends


def _on_signal(signum, _frame) -> None:
    """The main thread's handler (Python runs it between bytecodes): the stop, and the
    default action back for a second signal. Raises StopRequested out of a blocked host call."""
    for handled in HANDLED:
        signal.signal(handled, signal.SIG_DFL)
    host_stop.request(signum)


def _watch(read_end: int) -> None:
    """The watcher: each byte of the wakeup fd is a signal number."""
    with os.fdopen(read_end, "rb", buffering=0) as wakeups:
        while True:
            byte = wakeups.read(1)
            if not byte:
                return
            if byte[0] in HANDLED:
                _stop(byte[0])


def _stop(signum: int) -> None:
    """Ask until a run has taken the request, or no guest runs any more."""
    host_stop.request(signum)
    while not host_stop.taken() and host_stop.pending() is not None:
        time.sleep(RESTOP_SECONDS)
        host_stop.stop_running()
