"""strace is a client of the debug interface (issue 15, docs/ARCHITECTURE.md: strace output lives above
the kernel and reaches it only through kernel_model/debug/, as strace reaches Linux only
through ptrace).

A scan of trapline/strace/'s source: no import of a kernel module but the door's re-export of
the plain ABI tables it prints with (kernel_model/debug/abi.py: flag, errno and signal names,
syscall argument kinds), nothing of the emulator, and none of the attribute paths that reach
past the door (a process's Machine, address space or page mapper, the kernel) outside comments.
"""
import re
from pathlib import Path

from tests.door_scan import imported_modules, lines_past_the_door

STRACE = Path(__file__).resolve().parents[4] / "trapline" / "strace"
ALLOWED_KERNEL_MODULES = {"kernel_model.debug", "kernel_model.debug.abi"}
PAST_THE_DOOR = re.compile(r"\.machine\b|\.space\b|\.vm\b|\.kernel\b|(?<!debug)\.threads\b"
                           r"|\.set_reg\(|\.reg\(|\.restart\b|\.sigmask\b")


def _sources():
    files = sorted(STRACE.glob("**/*.py"))
    assert len(files) >= 6                          # the scan sees the package
    return files


def _imports():
    return imported_modules(_sources())


def test_strace_imports_no_kernel_module_but_the_door():
    imported = _imports()
    kernel = {(name, module) for name, module in imported if module.startswith("kernel_model")}
    assert kernel, "strace reaches the kernel somewhere: the door at least"
    assert {module for _, module in kernel} <= ALLOWED_KERNEL_MODULES, sorted(kernel)


def test_strace_imports_nothing_of_the_emulator_or_the_loader():
    below = sorted((name, module) for name, module in _imports()
                   if module.split(".")[0] in ("emu", "loader", "unicorn", "instrumenter"))
    assert below == []


def test_no_attribute_path_reaches_past_the_door():
    assert lines_past_the_door(_sources(), PAST_THE_DOOR) == []
