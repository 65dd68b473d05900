"""The boundary finder (instrumenter/insn/code_boundaries.py, issue 26) against objdump: an
address inside a sized function is accepted exactly when objdump's disassembly of the sample,
which decodes each function linearly from its symbol, has an instruction starting there.

objdump (GNU binutils) is a decoder independent of capstone, which the finder uses."""
from __future__ import annotations

import re
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from instrumenter.insn.code_boundaries import NotAnInstruction, boundaries_of
from loader.elf import load_elf_file

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "bin"
PROGRAMS = [SAMPLES / arch / name for arch in ("i386", "x86_64")
            for name in ("fib", "callchain", "threads", "signals", "alloc")]
# "  13393:\te8 98 19 00 00       \tcall ..." (a long instruction's further bytes continue on
# lines with no second tab: not instructions)
_LINE = re.compile(r"^\s*([0-9a-f]+):\t([0-9a-f ]+)\t(\S*)")


@lru_cache(maxsize=None)
def objdump_starts(path: Path) -> frozenset[int]:
    """Every instruction start objdump -d shows in the file. objdump prints FWAIT and the x87
    instruction after it as one (`9b db 3c 24  fstpt (%esp)`, the assembler's wait form), but
    9B is an instruction of its own (SDM Vol. 2B, WAIT/FWAIT; Linux's insn decoder too): the
    CPU starts one at the next byte as well."""
    assert shutil.which("objdump"), "objdump (binutils) is the independent oracle"
    text = subprocess.run(["objdump", "-d", str(path)], check=True, capture_output=True,
                          text=True).stdout
    starts = set()
    for address, raw, mnemonic in (m.groups() for m in map(_LINE.match, text.splitlines()) if m):
        starts.add(int(address, 16))
        if raw.startswith("9b ") and mnemonic != "fwait":
            starts.add(int(address, 16) + 1)
    return frozenset(starts)


@lru_cache(maxsize=None)
def sized_functions(path: Path) -> tuple:
    image = load_elf_file(str(path))
    return image, tuple(f for f in image.symbols.functions() if f.size > 1)


def accepted(image, address: int) -> bool:
    try:
        boundaries_of(image).check(address)
    except NotAnInstruction:
        return False
    return True


@settings(max_examples=max(settings().max_examples, 200))
@given(st.sampled_from(PROGRAMS), st.data(), st.booleans())
def test_an_address_in_a_function_is_accepted_iff_objdump_starts_an_instruction_there(
        path, data, at_a_start):
    """Half the draws take an instruction start, half an address inside an instruction: both
    sides of the iff are reached by construction, in every sample of both arches."""
    image, functions = sized_functions(path)
    starts = objdump_starts(path)
    function = data.draw(st.sampled_from(functions))
    body = range(function.addr, function.addr + function.size)
    inside = [a for a in body if (a in starts) == at_a_start]
    if not inside:                   # a function of one instruction has no inner byte to draw
        assert not at_a_start and all(a in starts for a in body[:1])
        return
    address = data.draw(st.sampled_from(inside))
    assert accepted(image, address) == at_a_start


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: f"{p.parent.name}-{p.name}")
def test_every_byte_of_every_sized_function_agrees_with_objdump(path):
    """The exhaustive form, per sample: the counts say both answers were given."""
    image, functions = sized_functions(path)
    starts = objdump_starts(path)
    verdicts = {True: 0, False: 0}
    for function in functions:
        for address in range(function.addr, function.addr + function.size):
            verdict = accepted(image, address)
            assert verdict == (address in starts), (function.name, hex(address))
            verdicts[verdict] += 1
    assert verdicts[True] > 100 and verdicts[False] > 100
