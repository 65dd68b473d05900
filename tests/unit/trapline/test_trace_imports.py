"""`trapline trace` imports what its probes need (issue 31: trace's start-up is part of what it
costs beside `run`): a trace that neither detaches nor profiles loads no detacher (detach.py,
its stack cleaner) and no unwinder (profiler/unwind.py, loader/cfi.py: DWARF CFI through
pyelftools), while a profile: probe still loads the unwinder it walks stacks with. A trace whose
probes place nothing in the code (system calls, process events) builds no probe strategy and
loads no disassembler or assembler (the block clock reaches capstone's library without its
package: emu/capstone_lib.py); one whose uprobes all take a jump builds the jump strategy and
the trampoline one it shares pages with, and no other (instrumenter/strategies/table.py)."""
import subprocess
import sys
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parents[3] / "samples" / "bin"
FIB = SAMPLES / "x86_64" / "fib"
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


def _loaded_after(*args: str, watched=WATCHED) -> tuple[str, set[str]]:
    done = subprocess.run([sys.executable, "-c", f"WATCHED = {tuple(watched)!r}\n" + SCRIPT, *args],
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


STRATEGY_MODULES = ("instrumenter.strategies.trampoline", "instrumenter.strategies.jump",
                    "instrumenter.strategies.emulate.strategy", "instrumenter.strategies.singlestep",
                    "instrumenter.strategies.singlestep_stopall",
                    "instrumenter.strategies.relocate.strategy", "instrumenter.strategies.native",
                    "instrumenter.strategies.page_layout")
LIBRARIES = ("capstone", "keystone", "elftools", "hashlib")    # hashlib: OpenSSL (emu/native)


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
@pytest.mark.parametrize("probes", [("syscall:write",), ("proc:exit", "syscall:exit_group")])
def test_a_trace_of_events_builds_no_strategy_and_loads_no_disassembler(arch, probes):
    options = [word for probe in probes for word in ("-p", probe)]
    status, loaded = _loaded_after("trace", "-o", "/dev/null", *options, "--",
                                   str(SAMPLES / arch / "fib"), "3",
                                   watched=STRATEGY_MODULES + LIBRARIES)
    assert status == "0"
    assert loaded == set()


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_uprobes_that_take_a_jump_build_the_jump_and_trampoline_strategies_only(arch):
    fib = SAMPLES / arch / "fib"
    status, loaded = _loaded_after("trace", "-o", "/dev/null", "-p", f"uprobe:{fib}:fib", "--",
                                   str(fib), "3", watched=STRATEGY_MODULES + ("keystone",))
    assert status == "0"
    # native.py: the jump strategy's parts (its import, not a native action's)
    assert loaded == {"instrumenter.strategies.jump", "instrumenter.strategies.trampoline",
                      "instrumenter.strategies.native", "instrumenter.strategies.page_layout"}
