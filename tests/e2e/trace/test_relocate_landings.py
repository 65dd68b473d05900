"""Landings inside a relocated function continue in its copy (US 6,898,785): a
longjmp back to the setjmp of relocated crunch() in samples/hotchain (every seventh level2 call,
in three threads) lands at the original return address of the setjmp call, whose relocate
breakpoint sends the thread into the copy although the copy recorded no such call, so every
probe of crunch — one on each of its instructions, the ones only a longjmp's path runs
included — counts what the trampoline strategy counts, and the output is the unprobed run's."""
from pathlib import Path

import pytest

from instrumenter.strategies.relocate.blocks import analyse
from instrumenter.probes.definitions import Probe
from loader.elf import load_elf_file
from trapline import Sandbox
from trapline.probespec import parse_probe_spec

pytestmark = pytest.mark.e2e
SAMPLES = Path(__file__).resolve().parents[3] / "samples" / "bin"


def _instructions(arch: str, name: str) -> list[int]:
    image = load_elf_file(str(SAMPLES / arch / "hotchain"))
    symbol = image.symbols.lookup(name)
    seg = next(s for s in image.segments if s.vaddr <= symbol.addr < s.vaddr + len(s.data))
    code = seg.data[symbol.addr - seg.vaddr:symbol.addr - seg.vaddr + symbol.size]
    return [insn.address for insn in analyse(code, symbol.addr, name, arch).insns]   # reachable


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_a_longjmp_into_a_relocated_function_goes_on_in_its_copy(arch):
    binary = [str(SAMPLES / arch / "hotchain"), "14", "0"]
    addresses = _instructions(arch, "crunch")

    def run(strategy):
        probes = [Probe(parse_probe_spec(f"uprobe:hotchain:0x{a:x}")) for a in addresses]
        return Sandbox(probes=probes, strategy=strategy).run(binary)
    plain = Sandbox().run(binary)
    relocated, trampoline = run("relocate"), run("trampoline")
    assert (relocated.stdout, relocated.exit_code) == (plain.stdout, plain.exit_code)
    assert b"jumps" in plain.stdout or b"jump" in plain.stdout
    assert relocated.hits == trampoline.hits
    once = min(trampoline.hits.values())            # the path only a longjmp takes
    assert 0 < once < max(trampoline.hits.values())
