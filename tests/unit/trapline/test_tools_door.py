"""gdbserver and the profiler's front end are clients of the debug interface (issue 15): like
strace (tests/unit/trapline/strace/test_door.py), they reach the kernel only through
kernel_model/debug/, here by way of the library's debugger and profiler (instrumenter/,
itself scanned by tests/unit/instrumenter/test_door.py).

A scan of each package's source: no import of the emulator, the loader or a kernel module but
the door, and none of the attribute paths that reach past it outside comments. Checked to
fail on a planted `from emu.errors import MachineError` (what gdbserver/access.py had).
"""
import re
from pathlib import Path

import pytest

from tests.door_scan import imported_modules, lines_past_the_door

TRAPLINE = Path(__file__).resolve().parents[3] / "trapline"
PACKAGES = {
    "gdbserver": [TRAPLINE / "gdbserver", TRAPLINE / "cli" / "gdbserver.py"],
    "profile": [TRAPLINE / "profile", TRAPLINE / "cli" / "profile.py"],
}
ALLOWED_KERNEL_MODULES = {"kernel_model.debug", "kernel_model.debug.abi"}
PAST_THE_DOOR = re.compile(r"\.machine\b|\.space\b|\.vm\b|\.kernel\b|(?<!debug)(?<!debugger)\.threads\b"
                           r"|\.set_reg\(|\.reg\(|\.restart\b|\.sigmask\b|\.cpu_state\b")


def _sources(name):
    files = []
    for place in PACKAGES[name]:
        files += sorted(place.glob("**/*.py")) if place.is_dir() else [place]
    assert len(files) >= 5                          # the scan sees the package
    return files


@pytest.mark.parametrize("name", sorted(PACKAGES))
def test_imports_no_kernel_module_but_the_door(name):
    imported = imported_modules(_sources(name))
    kernel = {module for _, module in imported if module.startswith("kernel_model")}
    assert kernel <= ALLOWED_KERNEL_MODULES, sorted(kernel)
    below = sorted((file, module) for file, module in imported
                   if module.split(".")[0] in ("emu", "loader", "unicorn"))
    assert below == []


@pytest.mark.parametrize("name", sorted(PACKAGES))
def test_no_attribute_path_reaches_past_the_door(name):
    assert lines_past_the_door(_sources(name), PAST_THE_DOOR) == []


def test_the_scan_sees_a_planted_leak(tmp_path):
    planted = tmp_path / "leak.py"
    planted.write_text("from emu.errors import MachineError\nx = thread.process.machine\n")
    assert ("leak.py", "emu.errors") in imported_modules([planted])
    assert lines_past_the_door([planted], PAST_THE_DOOR) == ["leak.py:2: x = thread.process.machine"]
