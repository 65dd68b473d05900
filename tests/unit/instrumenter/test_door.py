"""The instrumenter reaches the kernel only through kernel_model/debug/ (issue 15, docs/ARCHITECTURE.md:
the debug interface is the only door between a tool and the kernel, as ptrace and uprobes are).

A scan of instrumenter/'s source: no import of a kernel module but the debug interface (and the
errno names table, plain data), and none of the attribute paths that reach past it (a process's
Machine or page mapper, the kernel's current thread, its exception delivery, a raw register
write) outside comments. The instrumenter's unit tests drive it with stand-ins of the door.
"""
import re
from pathlib import Path

from tests.door_scan import imported_modules, lines_past_the_door

INSTRUMENTER = Path(__file__).resolve().parents[3] / "instrumenter"
ALLOWED_KERNEL_MODULES = {"kernel_model.debug", "kernel_model.errno"}
PAST_THE_DOOR = re.compile(r"\.machine\b|\.vm\.vma_at|kernel\.current\b|deliver_exception\("
                           r"|\.set_reg\(|\bprocess\.vm\b|\.space\.machine\b")


def _sources():
    files = sorted(INSTRUMENTER.glob("**/*.py"))
    assert len(files) > 20                          # the scan sees the package
    return files


def test_instrumenter_imports_no_kernel_module_but_the_door():
    imported = imported_modules(_sources())
    kernel = {(name, module) for name, module in imported if module.startswith("kernel_model")}
    assert kernel, "the instrumenter reaches the kernel somewhere: the door at least"
    assert {module for _, module in kernel} <= ALLOWED_KERNEL_MODULES, sorted(kernel)


def test_no_attribute_path_reaches_past_the_door():
    assert lines_past_the_door(_sources(), PAST_THE_DOOR) == []
