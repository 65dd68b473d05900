"""Real gdb breakpoints carried into a relocated body (US 6,957,421: "debugging
breakpoints that are carried from the block of original code into the instrumented code, or
inserted there during debugging"). fib relocated (`--strategy relocate`, probes at fib and at
its third instruction): a breakpoint on that original instruction, inside the body, and one
on the return point of fib's first recursive call, set before the copy exists or after it
ran, stop exactly where and as often as under the trampoline strategy, each reported at its
ORIGINAL address (the thread is in the copy); the return point's stop (made in the original
code, before the relocate int3 sends the thread back into the copy) is not made twice; the
probe records are those of the run without gdb, virtual timestamps included."""
import re
import subprocess
import sys

import pytest

from instrumenter.insn.decode import decode
from loader.elf import load_elf_file
from tests.e2e.gdb_batch import gdb_batch, sample
from tests.e2e.gdb_client import REPO
from tests.quick_profile import alternates

pytestmark = pytest.mark.e2e
ARCHES = ("x86_64", "i386")
PROBES = ("uprobe:fib:fib", "uprobe:fib:fib+{third}")


def _fib_points(arch: str) -> tuple[int, int, int]:
    """fib's address, its third instruction's, and the first recursive call's return point."""
    image = load_elf_file(sample(arch, "fib"))
    fib = image.symbols.lookup("fib")
    seg = next(s for s in image.segments if s.vaddr <= fib.addr < s.vaddr + len(s.data))
    code = seg.data[fib.addr - seg.vaddr:fib.addr - seg.vaddr + fib.size]
    at, insns = fib.addr, []
    while at < fib.addr + fib.size:
        insns.append(decode(code[at - fib.addr:], at, arch))
        at = insns[-1].next_address
    call = next(i for i in insns if "call" in i.groups and i.branch_target == fib.addr)
    return fib.addr, insns[2].address, call.next_address


def _stops(out: str) -> list[tuple[int, int]]:
    return [(int(n), int(a, 16)) for n, a in re.findall(r"^Breakpoint (\d+), 0x([0-9a-f]+) in fib",
                                                        out, re.M)]


def _session(arch, strategy, commands, records):
    fib, third, _ = _fib_points(arch)
    return gdb_batch(sample(arch, "fib"), commands, args=("4",),
                     probes=[p.format(third=third - fib) for p in PROBES], strategy=strategy,
                     records=records)


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("when", ["before the copy", "after the copy ran"])
@alternates("arch")
def test_breakpoints_in_a_relocated_body_stop_as_in_the_original(arch, when, tmp_path):
    fib, third, back = _fib_points(arch)
    breaks = [f"break *0x{third:x}", f"break *0x{back:x}"]
    if when == "before the copy":
        commands = breaks + ["continue"] * 14 + ["p $pc"]
    else:   # the copy is written at fib's first entry: two calls ran in it, the third waits
        commands = ["break *fib", "continue", "continue", "continue", "delete"] + breaks + \
            ["continue"] * 12
    runs = {}
    for strategy in ("relocate", "trampoline"):
        records = tmp_path / f"{strategy}.txt"
        out = _session(arch, strategy, commands, records)
        assert "fib(4) = 3" in out and "exited normally" in out, out
        runs[strategy] = (_stops(out), records.read_text().splitlines())
    stops, records = runs["relocate"]
    assert stops == runs["trampoline"][0]
    body = [a for _, a in stops if a == third]
    returns = [a for _, a in stops if a == back]
    # 9 calls of fib(4); 4 of them (n >= 2) return from their first recursive call.
    assert len(returns) == 4 and len(body) == (9 if when == "before the copy" else 7)
    without = tmp_path / "plain.txt"
    subprocess.run([sys.executable, "-m", "trapline", "trace", "--strategy", "relocate",
                    "-o", str(without),
                    *[a for p in PROBES for a in ("-p", p.format(third=third - fib))],
                    "--", sample(arch, "fib"), "4"], check=True, cwd=REPO, capture_output=True)
    assert len(records) == 18 and records == without.read_text().splitlines()
