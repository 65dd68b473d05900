"""trapline/exit_status.py: trapline's own failures have conventional, distinct statuses."""
import pytest

from emu.errors import InternalError, MachineError, TraplineError, UnicornInternalsError
from instrumenter.errors import InstrumenterError
from kernel_model import errno as E
from kernel_model.errors import ExecFailed, KernelError, KernelPanic
from kernel_model.kernel import Deadlock, InstructionBudgetExceeded
from loader.errors import LoaderError
from trapline.errors import UsageError
from trapline.exit_status import (CANNOT_EXECUTE, INTERNAL, NOT_FOUND, STOPPED, USAGE, exit_for,
                                  status_for)


@pytest.mark.parametrize("error,status", [
    (UsageError("bad probe spec"), USAGE),
    (InstrumenterError("0x1001 is not an instruction boundary"), USAGE),
    (KernelError("--rootfs /nope: not a directory"), USAGE),
    (ExecFailed("cannot run /nope: ENOENT", E.ENOENT), NOT_FOUND),
    (ExecFailed("cannot run /etc/passwd: EACCES", E.EACCES), CANNOT_EXECUTE),
    (ExecFailed("cannot run /x: ENOEXEC", E.ENOEXEC), CANNOT_EXECUTE),
    (LoaderError("not an ELF file"), CANNOT_EXECUTE),
    (Deadlock("nothing can run"), STOPPED),
    (InstructionBudgetExceeded("budget used up"), STOPPED),
    (KernelPanic("invariant"), INTERNAL),
    (MachineError("emulator"), INTERNAL),
    (ZeroDivisionError("a bug"), INTERNAL),
    (UnicornInternalsError("cannot locate Unicorn's instruction counter"), INTERNAL),
])
def test_status_for_each_kind_of_failure(error, status):
    assert status_for(error) == status


def test_internal_error_says_it_is_a_bug_with_the_traceback():
    lines = []
    try:
        raise ZeroDivisionError("division by zero")
    except ZeroDivisionError as error:
        with pytest.raises(SystemExit) as exited:
            exit_for(error, lines.append)
    assert exited.value.code == INTERNAL
    assert "internal error (a bug in trapline" in lines[0] and "Traceback" in lines[1]


def test_other_failures_are_one_line():
    lines = []
    with pytest.raises(SystemExit) as exited:
        exit_for(UsageError("bad probe spec 'x'"), lines.append)
    assert exited.value.code == USAGE and lines == ["trapline: bad probe spec 'x'"]


def test_bugs_and_refused_requests_are_separate_hierarchies():
    """A KernelPanic is a bug, not a sibling of the errors a user causes (issue 15)."""
    assert issubclass(KernelPanic, InternalError) and not issubclass(KernelPanic, TraplineError)
    assert issubclass(UnicornInternalsError, InternalError)
    assert not issubclass(InternalError, TraplineError)


@pytest.mark.parametrize("argv,says", [
    (["gdbserver", "--listen", "nonsense", "--", "/bin/true"], "Invalid value for --listen: 'nonsense' is not HOST:PORT"),
    (["gdbserver", "--", "/bin/true"], "give exactly one of --stdio and --listen HOST:PORT"),
    (["gdbserver", "--stdio", "-E", "bogus", "--", "/bin/true"], "Invalid value for --env: 'bogus' is not KEY=VALUE"),
    (["trace", "--handler-fxsave", "-p", "uprobe:true:main", "--", "/bin/true"], "--handler-fxsave needs --handler"),
])
def test_options_checked_in_a_commands_body_are_usage_errors_in_one_line(argv, says):
    """click's UsageError/BadParameter raised after parsing (in the command's body) is the
    user's error, status 2 and one line, not an internal error with a traceback."""
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-m", "trapline", *argv], capture_output=True,
                          stdin=subprocess.DEVNULL, timeout=120)
    assert done.returncode == USAGE
    assert done.stderr.decode().splitlines() == [f"trapline: {says}"]
