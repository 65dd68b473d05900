"""A Python exception out of a syscall implementation is a KernelPanic naming the call, its
arguments, the exception and where it was raised (kernel_model/panic.py); trapline's own
errors and a guest's errno pass through unchanged."""
import pytest

from kernel_model.errors import KernelPanic
from kernel_model.panic import is_kernel_bug
from kernel_model.syscalls.registry import IMPLEMENTATIONS, SyscallDef
from emu.errors import MachineError
from emu.memory import MemoryAccessError
from kernel_model.errors import KernelError

from .call_script import run_script


def broken_uname(ctx, buf):
    raise ValueError("a bug in uname")


def test_an_exception_in_an_implementation_is_a_kernel_panic_with_a_report(arch, monkeypatch):
    monkeypatch.setitem(IMPLEMENTATIONS, "uname", SyscallDef("uname", broken_uname, False, 1))
    with pytest.raises(KernelPanic) as info:
        run_script(arch, [("getpid",), ("uname", 0x1234)])
    report = str(info.value)
    assert report.startswith("kernel bug in uname (nr ")
    assert f"{arch} ABI" in report and "args (0x1234, " in report
    assert "ValueError: a bug in uname" in report
    assert "test_panic.py" in report and "in broken_uname" in report
    assert isinstance(info.value.__cause__, ValueError)


def test_which_exceptions_are_kernel_bugs():
    assert is_kernel_bug(ValueError())
    assert is_kernel_bug(MemoryAccessError(0x1000, 4))       # an unchecked guest access
    assert is_kernel_bug(MachineError("emulator refused"))
    assert not is_kernel_bug(KernelPanic("already one"))
    assert not is_kernel_bug(KernelError("a tool's request"))
    assert not is_kernel_bug(KeyboardInterrupt())


def test_guest_errors_stay_errnos(arch):
    results, _, _ = run_script(arch, [("uname", 0x10), ("getrandom", 0x10, 4, 0)])
    assert results == [-14, -14]
