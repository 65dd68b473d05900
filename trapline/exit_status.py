"""trapline's own exit statuses, kept apart from what a guest returns.

A guest's status passes through unchanged (128+N after death by signal N, as a shell reports
it). When trapline itself cannot do what it was asked, it exits with a status from the
conventions a user already knows, and one line on stderr:
  2    a usage error: a bad option, probe spec or experiment spec (click's own status), or a
       probe that cannot be placed where it was asked;
  126  the program exists but cannot be executed (EACCES, ENOEXEC, ELIBBAD...), as a shell says;
  127  the program (or its interpreter) is not found, as a shell says;
  124  the guest did not finish: --max-insns ran out, nothing could run any more (a deadlock
       report) or it kept forking at the task limit (a runaway's report), as timeout(1)
       answers for a command it stopped;
  70   an internal error (EX_SOFTWARE, sysexits.h): a bug in trapline, reported as one, with
       the traceback; never disguised as the user's error.
Stopped by the host (SIGINT, SIGTERM, SIGHUP, or SIGPIPE when trapline's output went away),
trapline writes what was recorded and dies of that signal, as strace does: a shell reports
128+N (130, 143, 129, 141), with no message (host_signals.py, host_output.py).
"""
from __future__ import annotations

import signal
import sys
import traceback

import click

from emu import host_stop
from emu.host_stop import StopRequested

from instrumenter.errors import InstrumenterError
from kernel_model import errno as E
from kernel_model.errors import ExecFailed, KernelError, KernelPanic
from loader.errors import LoaderError

from .errors import UsageError

USAGE, CANNOT_EXECUTE, NOT_FOUND, STOPPED, INTERNAL = 2, 126, 127, 124, 70


def _stopped_by_host(error: BaseException) -> bool:
    """The host stopped the guests (StopRequested), or an output of trapline's went away
    outside the writers that expect it (a report printed after the run): SIGPIPE."""
    if isinstance(error, BrokenPipeError):
        host_stop.request(signal.SIGPIPE)
    return isinstance(error, (StopRequested, BrokenPipeError))


def status_for(error: BaseException) -> int:
    if isinstance(error, ExecFailed):
        return NOT_FOUND if error.errno == E.ENOENT else CANNOT_EXECUTE
    if isinstance(error, (UsageError, InstrumenterError, click.UsageError)):
        return USAGE                   # (click's UsageError: an option checked in a command's body)
    if isinstance(error, LoaderError):
        return CANNOT_EXECUTE
    from kernel_model.kernel import Deadlock, InstructionBudgetExceeded
    from kernel_model.task_limit import TaskLimitRunaway
    if isinstance(error, (Deadlock, InstructionBudgetExceeded, TaskLimitRunaway)):
        return STOPPED
    if isinstance(error, KernelError) and not isinstance(error, KernelPanic):
        return USAGE                   # a request the kernel cannot honour (bad rootfs, cwd...)
    return INTERNAL                    # KernelPanic, MachineError, any other exception: a bug


def exit_for(error: BaseException, echo) -> None:
    """Report `error` with `echo(text)` (stderr) and exit with its status."""
    if _stopped_by_host(error):
        from .host_signals import finish
        finish(INTERNAL)                # dies of the signal: nothing to report
    status = status_for(error)
    if status == INTERNAL:
        echo(f"trapline: internal error (a bug in trapline, please report it): "
             f"{type(error).__name__}: {error}")
        echo("".join(traceback.format_exception(error)).rstrip())
    elif isinstance(error, click.ClickException):
        echo(f"trapline: {error.format_message()}")
    else:
        echo(f"trapline: {error}")
    sys.exit(status)
