"""instrumenter/strategies/relocate/: a function's reachable code, its instrumented copy
and the relocation table both ways, and the return records of original-space return pointers.
"""
from pathlib import Path

import pytest

from instrumenter.errors import InstrumenterError
from instrumenter.strategies.relocate.blocks import analyse
from instrumenter.strategies.relocate.copy import lay_out_copy
from instrumenter.strategies.relocate.returns import ReturnRecords
from instrumenter.strategies.relocate.table import SpaceRelocations
from instrumenter.insn.decode import decode
from loader.elf import load_elf_file

ROOT = Path(__file__).resolve().parents[5]
COPY_AT = 0x7000_0000


def _fib(arch: str):
    image = load_elf_file(str(ROOT / "samples" / "bin" / arch / "fib"))
    fn = image.symbols.lookup("fib")
    seg = next(s for s in image.segments if s.vaddr <= fn.addr < s.vaddr + len(s.data))
    return analyse(seg.data[fn.addr - seg.vaddr:fn.addr - seg.vaddr + fn.size], fn.addr, "fib",
                   arch)


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_the_table_maps_every_instruction_both_ways(arch):
    fc = _fib(arch)
    assert len(fc.calls) == 2                        # fib(n-1) and fib(n-2): two return points
    copy = lay_out_copy(fc, COPY_AT, arch, {fc.start: (True, [])})
    table = SpaceRelocations()
    table.add(copy)
    for insn in fc.insns:
        at = table.relocated_of(insn.address)
        assert table.original_of(at) == (insn.address, True)
        piece = copy.by_original[insn.address]
        if piece.insn_start + 1 < piece.end:         # inside a longer recipe: not exact
            assert table.original_of(piece.insn_start + 1) in ((insn.address, False), None) \
                or table.locate(piece.insn_start + 1)[2]
    assert table.original_of(COPY_AT - 1) is None and table.relocated_of(fc.end) is None
    assert copy.callouts[COPY_AT] == ("probe", fc.start)          # the entry probe's int3
    assert copy.entry_onward == COPY_AT + 1
    calls = [v for v in copy.callouts.values() if v[0] == "call"]
    assert sorted(original for _, original in calls) == sorted(c.address for c in fc.calls)
    for call in fc.calls:                                         # each has a continuation
        stub = copy.stubs[call.next_address]
        assert table.original_of(stub.start) == (call.next_address, True)


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_internal_branches_and_calls_stay_in_the_copy(arch):
    fc = _fib(arch)
    copy = lay_out_copy(fc, COPY_AT, arch, {})
    code = bytes(copy.code)
    for piece in copy.pieces:
        if piece.start in [s.start for s in copy.stubs.values()]:
            continue
        insn = decode(code[piece.insn_start - COPY_AT:], piece.insn_start, arch)
        target = insn.branch_target
        if target is not None and insn.base_mnemonic.startswith("j"):
            assert copy.address <= target < copy.end or not fc.contains(target), str(insn)


def test_an_indirect_jump_refuses_the_function():
    # lea rax, [rip+0]; jmp rax; ret
    refused = analyse(bytes.fromhex("488d0500000000ffe0c3"), 0x1000, "f", "x86_64")
    assert isinstance(refused, InstrumenterError) and "indirect jump" in str(refused)
    # je 0x1004 (into the immediate of the mov at 0x1002); mov eax, imm32; ret
    overlap = analyse(bytes.fromhex("7402b890c3c3c3c3"), 0x1000, "g", "x86_64")
    assert isinstance(overlap, InstrumenterError) and "overlaps" in str(overlap)


def test_return_records_match_the_caller_and_drop_abandoned_frames():
    records = ReturnRecords()
    records.push(1, 10, 0x8000, 0x401000)            # an outer call
    records.push(1, 10, 0x7F00, 0x401100)            # a deeper one (abandoned by longjmp)
    assert not records.pop(1, 11, 0x8000, 0x401000)  # another thread: not from the copy
    assert not records.pop(1, 10, 0x8000, 0x402000)  # another return address
    assert records.pop(1, 10, 0x8004, 0x401000)      # `ret 4` popped an argument too
    assert records.pending(1) == 0                   # the deeper record went with it
    records.push(1, 10, 0x8000, 0x401000)
    records.fork(1, 10, 2, 20)
    assert records.pop(2, 20, 0x8000, 0x401000) and records.pending(1) == 1
    records.forget(1)
    assert records.pending(1) == 0
