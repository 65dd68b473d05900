"""Signal handlers never see a relocated address (US 6,898,785), and sigreturn goes on
in the copy: samples/relocate_signals's handlers read the interrupted PC from their ucontext —
SIGALRMs of an interval timer while spin() runs relocated, SIGSEGVs of poke()'s relocated
store — and check it lies in the original function. With spin and poke relocated (probes at
their entries, returns and in spin's loop, Python and native actions) the program prints its
native output (samples/expected), and every probe counts what the trampoline strategy counts:
after each handler the thread went on in the copy (the probes after the loop fire), and no
instruction ran twice or was skipped (spin's result, the loop's count).
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from instrumenter.insn.decode import decode
from instrumenter.probes.definitions import Probe
from loader.elf import load_elf_file
from trapline import Sandbox
from trapline.probespec import parse_probe_spec
from tests.quick_profile import alternates

pytestmark = pytest.mark.e2e
SAMPLES = Path(__file__).resolve().parents[3] / "samples"
EXPECTED = (SAMPLES / "expected" / "relocate_signals.out").read_bytes()


def _instructions(image, name: str, arch: str):
    symbol = image.symbols.lookup(name)
    seg = next(s for s in image.segments if s.vaddr <= symbol.addr < s.vaddr + len(s.data))
    code = seg.data[symbol.addr - seg.vaddr:symbol.addr - seg.vaddr + symbol.size]
    at, found = symbol.addr, []
    while at < symbol.addr + symbol.size:
        insn = decode(code[at - symbol.addr:], at, arch)
        found.append(insn)
        at = insn.next_address
    return symbol, found


def _sites(binary: Path, arch: str) -> dict[str, str]:
    """Probe specs by role: the entries, the `ret`s, and spin's hot loop back-edge (the
    backward branch that most of the run's alarms interrupt)."""
    image = load_elf_file(str(binary))
    sites = {}
    for name in ("spin", "poke"):
        symbol, insns = _instructions(image, name, arch)
        sites[f"{name}-entry"] = f"uprobe:relocate_signals:{name}"
        ret = next(i for i in insns if i.base_mnemonic == "ret")
        sites[f"{name}-ret"] = f"uprobe:relocate_signals:{name}+{ret.address - symbol.addr}"
        if name == "spin":
            back = [i for i in insns if i.branch_target is not None
                    and symbol.addr <= i.branch_target < i.address]
            sites["spin-loop"] = f"uprobe:relocate_signals:{name}+{back[0].address - symbol.addr}"
    return sites


def _run(binary: Path, arch: str, strategy: str, native: str | None):
    sites = _sites(binary, arch)
    probes = [Probe(parse_probe_spec(spec), native=native if role == "spin-loop" else None)
              for role, spec in sorted(sites.items())]
    return Sandbox(probes=probes, strategy=strategy).run([str(binary)])


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
@pytest.mark.parametrize("native", [None, "count"])
@alternates("arch")
def test_handlers_see_original_pcs_and_the_copy_goes_on(arch, native, tmp_path):
    binary = tmp_path / arch / "relocate_signals"          # a fixed path: CI's clone differs
    binary.parent.mkdir()
    shutil.copy2(SAMPLES / "bin" / arch / "relocate_signals", binary)
    relocated = _run(binary, arch, "relocate", native)
    trampoline = _run(binary, arch, "trampoline", native)
    assert relocated.stdout == EXPECTED, relocated.stderr
    assert relocated.exit_code == 0
    assert relocated.hits == trampoline.hits
    sites = _sites(binary, arch)
    assert relocated.hits[sites["spin-ret"]] == 1 and relocated.hits[sites["poke-ret"]] == 3
    assert relocated.hits[sites["spin-loop"]] > 100_000
