"""The probe language is a client of the debug interface (issue 15, as strace, gdbserver and the
profiler's front end are: tests/unit/trapline/test_tools_door.py): it imports no module of the
emulator, the loader or the kernel but the door, and reaches past it by no attribute path."""
import re
from pathlib import Path

from tests.door_scan import imported_modules, lines_past_the_door

LANG = Path(__file__).resolve().parents[4] / "trapline" / "lang"
ALLOWED_KERNEL_MODULES = {"kernel_model.debug", "kernel_model.debug.abi"}
PAST_THE_DOOR = re.compile(r"\.machine\b|\.space\b|\.vm\b|\.kernel\b|(?<!debug)(?<!debugger)\.threads\b"
                           r"|\.set_reg\(|\.reg\(|\.restart\b|\.sigmask\b|\.cpu_state\b")


def _sources():
    files = sorted(LANG.glob("*.py"))
    assert len(files) >= 15                        # the scan sees the package
    return files


def test_imports_no_kernel_module_but_the_door():
    imported = imported_modules(_sources())
    kernel = {module for _, module in imported if module.startswith("kernel_model")}
    assert kernel <= ALLOWED_KERNEL_MODULES, sorted(kernel)
    assert sorted((f, m) for f, m in imported if m.split(".")[0] in ("emu", "loader", "unicorn")) == []


def test_no_attribute_path_reaches_past_the_door():
    assert lines_past_the_door(_sources(), PAST_THE_DOOR) == []
