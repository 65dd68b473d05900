"""Real gdb through relocated functions (US 6,957,421 / US 6,898,785): with main and
fib relocated (`--strategy relocate`), `bt` in fib shows main's ORIGINAL return address, and
after `finish` the thread, back in main's copy, is shown at the original address: `x/3i $pc`
lists main's original instructions and `stepi` runs exactly one of them."""
import re

import pytest

from tests.e2e.gdb_batch import gdb_batch, sample

ARCHES = ("x86_64", "i386")


def _main_bounds(arch: str) -> tuple[int, int]:
    from loader.elf import load_elf
    path = sample(arch, "fib")
    with open(path, "rb") as f:
        main = load_elf(f.read(), path).symbols.lookup("main")
    return main.addr, main.addr + main.size


@pytest.mark.e2e
@pytest.mark.parametrize("arch", ARCHES)
def test_bt_and_x_i_in_a_relocated_function_show_original_addresses(arch, tmp_path):
    start, end = _main_bounds(arch)
    out = gdb_batch(sample(arch, "fib"), [
        "break *fib", "continue", "bt", "delete", "finish", "p $pc", "x/3i $pc", "stepi",
        "p $pc", "continue"],
        args=("4",), probes=["uprobe:fib:main", "uprobe:fib:fib"], strategy="relocate",
        records=tmp_path / "records.txt")
    caller = re.search(r"^#1  0x([0-9a-f]+) in main \(\)", out, re.M)
    assert caller and start < int(caller.group(1), 16) < end         # R, not a copy address
    back = int(caller.group(1), 16)
    pcs = [int(m, 16) for m in re.findall(r"^\$\d+ = \(void \(\*\)\(\)\) (0x[0-9a-f]+)", out, re.M)]
    assert pcs[0] == back                                             # finish: the return point
    listing = [line for line in out.splitlines() if re.match(r"^(=> |   )0x[0-9a-f]+ <main\+", line)]
    assert len(listing) == 3 and "int3" not in out
    second = int(re.match(r"^\s*(?:=> )?(0x[0-9a-f]+)", listing[1]).group(1), 16)
    assert pcs[1] == second                                           # one original instruction
    assert "fib(4) = 3" in out and "exited normally" in out
    records = (tmp_path / "records.txt").read_text()
    assert records.count("uprobe:fib:fib fib") == 9                   # every call of fib(4)
