"""`trapline trace` imports what its probes need (issue 31: trace's start-up is part of what it
costs beside `run`): a trace that neither detaches nor profiles loads no detacher (detach.py,
its stack cleaner) and no unwinder (profiler/unwind.py, loader/cfi.py: DWARF CFI through
pyelftools), while a profile: probe still loads the unwinder it walks stacks with."""
import subprocess
import sys
from pathlib import Path

import pytest

FIB = Path(__file__).resolve().parents[3] / "samples" / "bin" / "x86_64" / "fib"
WATCHED = ("instrumenter.tracing.session", "instrumenter.tracing.detach", "instrumenter.profiler.unwind",
           "loader.cfi")

SCRIPT = """
import sys
from trapline.cli import main
try:
    main(sys.argv[1:])
except SystemExit as e:
    status = e.code
print(status, " ".join(m for m in WATCHED if m in sys.modules) or "-", file=sys.stderr)
"""


def _loaded_after(*args: str) -> tuple[str, set[str]]:
    done = subprocess.run([sys.executable, "-c", f"WATCHED = {WATCHED!r}\n" + SCRIPT, *args],
                          capture_output=True, text=True, timeout=120)
    status, loaded = done.stderr.strip().splitlines()[-1].split(" ", 1)
    return status, set() if loaded == "-" else set(loaded.split())


@pytest.mark.parametrize("probe", ["syscall:write", f"uprobe:{FIB}:main"])
def test_a_plain_trace_loads_no_detacher_and_no_unwinder(probe):
    status, loaded = _loaded_after("trace", "-o", "/dev/null", "-p", probe, "--", str(FIB), "3")
    assert status == "0"
    assert loaded == {"instrumenter.tracing.session"}


def test_a_stack_profile_still_loads_its_unwinder():
    status, loaded = _loaded_after("trace", "-o", "/dev/null", "-p", "profile:insns:10000:stack", "--",
                                   str(FIB), "3")
    assert status == "0"
    assert {"instrumenter.profiler.unwind", "loader.cfi"} <= loaded
