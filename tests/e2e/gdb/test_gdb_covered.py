"""A gdb breakpoint on an instruction a jump probe's patch covers (`break fib` is fib's first
instruction after the prologue, inside the 5 bytes of the `jmp` to the trampoline under
`auto`): that instruction runs in the trampoline's body, where the breakpoint is carried
(instrumenter/debugger/addrmap.py copies_of), so gdb stops at every call, shown at the original
address, steps on from there, and the probe records every call as without gdb."""
import re

import pytest

from tests.e2e.gdb_batch import gdb_batch, sample

ARCHES = ("x86_64", "i386")


@pytest.mark.parametrize("arch", ARCHES)
def test_break_after_the_prologue_of_a_jump_probed_function(arch, tmp_path):
    records = tmp_path / "records.txt"
    out = gdb_batch(sample(arch, "fib"), [
        "break fib", "continue", "bt 2", "stepi", "continue", "delete", "continue"], args=[4],
        probes=["uprobe:fib:fib"], records=records)
    stops = re.findall(r"Breakpoint 1, 0x([0-9a-f]+) in fib \(\)", out)
    placed = re.search(r"Breakpoint 1 at 0x([0-9a-f]+)", out).group(1)
    assert len(stops) == 2 and all(int(s, 16) == int(placed, 16) for s in stops)
    assert re.search(r"#1  0x[0-9a-f]+ in main \(\)", out)
    assert "fib(4) = 3" in out and "exited normally" in out
    assert records.read_text().count("uprobe:fib:fib") == 9        # 2*F(5)-1 calls
