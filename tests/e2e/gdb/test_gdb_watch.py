"""Watchpoints under gdb (Z2/Z3/Z4: `watch`, `rwatch`, `awatch`) on both arches: memory hooks
ranged to the watched bytes (emu/watchpoints.py) stop the program's own accesses, reported after
the accessing instruction as x86's data breakpoints are, with the values gdb expects, the
store done once. (That the probes' own stores never trigger one:
tests/unit/instrumenter/debugger/test_watchpoints.py.)"""
import re

import pytest

from tests.e2e.gdb_batch import gdb_batch, sample

ARCHES = ("x86_64", "i386")
LEAF_CALLS = "*(int *)&leaf_calls"        # samples/fork_probe.c: leaf() adds 1 per call


@pytest.mark.parametrize("arch", ARCHES)
def test_watch_stops_after_each_store_with_old_and_new_values(arch):
    out = gdb_batch(sample(arch, "fork_probe"), [
        f"watch {LEAF_CALLS}", "continue", "bt 1", "continue", "delete", "continue"],
        args=[1, 1])
    assert f"Hardware watchpoint 1: {LEAF_CALLS}" in out
    assert "Old value = 0\nNew value = 1" in out and "Old value = 1\nNew value = 2" in out
    assert re.search(r"#0  0x[0-9a-f]+ in leaf \(\)", out)
    assert "parent: work=2 leaf=4" in out                   # each call counted once
    assert "[Inferior 1 (process 100) exited normally]" in out


@pytest.mark.parametrize("arch", ARCHES)
def test_rwatch_and_awatch(arch):
    out = gdb_batch(sample(arch, "fork_probe"), [
        f"rwatch {LEAF_CALLS}", "continue", "delete", f"awatch {LEAF_CALLS}", "continue",
        "continue", "delete", "continue"], args=[1, 1])
    # `incl leaf_calls` reads and writes: one stop, after it (x86's data breakpoints trap
    # after the instruction, Intel SDM Vol. 3B 17.3.1.2), the value then already incremented
    assert f"Hardware read watchpoint 1: {LEAF_CALLS}\n\nValue = 1\n" in out
    assert f"Hardware access (read/write) watchpoint 2: {LEAF_CALLS}\n\nOld value = 1\nNew value = 2" in out
    assert "Old value = 2\nNew value = 3" in out
    assert "parent: work=2 leaf=4" in out and "exited normally" in out


@pytest.mark.parametrize("arch", ARCHES)
def test_a_store_in_a_probed_function_is_seen_through_the_probe(arch, tmp_path):
    """leaf is jump-probed (auto): its store runs in the trampoline's relocated copy, and stops
    there; gdb is shown the original address after it, and every call is recorded."""
    records = tmp_path / "records.txt"
    out = gdb_batch(sample(arch, "fork_probe"), [
        f"watch {LEAF_CALLS}", "continue", "continue", "delete", "continue"], args=[1, 1],
        probes=["uprobe:fork_probe:leaf"], records=records)
    assert "Old value = 1\nNew value = 2" in out
    assert re.search(r"\n0x[0-9a-f]+ in leaf \(\)\n", out)           # not a trampoline address
    assert "parent: work=2 leaf=4" in out and "exited normally" in out
    assert records.read_text().count("uprobe:fork_probe:leaf") == 6  # 4 calls + the child's 2
