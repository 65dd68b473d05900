"""The boundary finder (instrumenter/insn/code_boundaries.py, issue 26) where no sized function
covers the address: symbols of size 0, padding, no code at all, an object without symbols or
section headers. Both arches, on the committed samples (musl's `_start` has size 0, as gcc's
crti.o `_init` has)."""
from pathlib import Path

import pytest

from instrumenter.insn.code_boundaries import CodeBoundaries, NotAnInstruction
from instrumenter.insn.decode import decode
from loader.elf import load_elf_file
from loader.symbols import SymbolTable

SAMPLES = Path(__file__).resolve().parents[4] / "samples" / "bin"
ARCHES = ("i386", "x86_64")


def fib_image(arch: str):
    return load_elf_file(str(SAMPLES / arch / "fib"))


def code_at(image, address: int) -> bytes:
    segment = next(s for s in image.segments if s.vaddr <= address < s.vaddr + s.filesz)
    return segment.data[address - segment.vaddr:address - segment.vaddr + 15]


@pytest.mark.parametrize("arch", ARCHES)
def test_inside_the_first_instruction_of_a_symbol_of_size_0_is_refused_naming_both_sides(arch):
    image = fib_image(arch)
    start = image.symbols.lookup("_start")
    assert start.size == 0 and image.symbols.function_at(start.addr) is None
    second = start.addr + decode(code_at(image, start.addr), start.addr, arch).length
    finder = CodeBoundaries(image)
    finder.check(start.addr)
    finder.check(second)
    for inside in range(start.addr + 1, second):
        with pytest.raises(NotAnInstruction) as refused:
            finder.check(inside)
        assert str(refused.value) == (f"not an instruction boundary (nearest: {start.addr:#x} "
                                      f"<_start>, {second:#x} <_start+{second - start.addr}>)")


@pytest.mark.parametrize("arch", ARCHES)
def test_a_symbol_of_size_0_reaches_to_the_next_symbol(arch):
    image = fib_image(arch)
    start = image.symbols.lookup("_start")
    following = min(s.addr for s in image.symbols.functions() if s.addr > start.addr)
    assert CodeBoundaries(image).extent(start) == following


@pytest.mark.parametrize("arch", ARCHES)
def test_no_code_outside_the_executable_segment_and_in_data_sections(arch):
    """0x12345: on i386 the page the text segment's mapping starts on, but before its PT_LOAD
    (a probe there was placed and never hit); on x86-64 nothing is mapped there."""
    image = fib_image(arch)
    finder = CodeBoundaries(image)
    with pytest.raises(NotAnInstruction, match=r"^no code at 0x12345 \(outside every "
                                               r"executable segment of fib\)$"):
        finder.check(0x12345)
    eh_frame, _size = image.sections[".eh_frame"]
    with pytest.raises(NotAnInstruction, match=rf"^no code at {eh_frame + 4:#x} \(in \.eh_frame, "
                                               r"which holds no instructions\)$"):
        finder.check(eh_frame + 4)


@pytest.mark.parametrize("arch", ARCHES)
def test_the_padding_after_a_sized_function_decodes_from_its_end(arch):
    image = fib_image(arch)
    fib = image.symbols.lookup("fib")
    end = fib.addr + fib.size
    assert image.symbols.function_at(end) is None          # padding before the next function
    finder = CodeBoundaries(image)
    finder.check(end)
    after = end + decode(code_at(image, end), end, arch).length
    finder.check(after)
    if after - end > 1:
        with pytest.raises(NotAnInstruction, match=rf"nearest: {end:#x}, {after:#x}\)$"):
            finder.check(end + 1)


@pytest.mark.parametrize("arch", ARCHES)
def test_without_symbols_or_section_headers_the_fdes_and_segments_anchor_the_sweep(arch):
    """A stripped object with no section headers: the executable PT_LOAD is the code, its FDEs
    say where functions start; fib's second instruction is still told from inside the first."""
    named = fib_image(arch)
    fib = named.symbols.lookup("fib")
    bare = named._replace(symbol_reader=lambda: SymbolTable())
    assert not bare.code_sections and not bare.symbols.functions()
    finder = CodeBoundaries(bare)
    assert fib.addr in finder.anchors()
    second = fib.addr + decode(code_at(bare, fib.addr), fib.addr, arch).length
    finder.check(fib.addr)
    finder.check(second)
    third = second + decode(code_at(bare, second), second, arch).length
    with pytest.raises(NotAnInstruction, match=rf"^not an instruction boundary \(nearest: "
                                               rf"{second:#x}, {third:#x}\)$"):
        finder.check(second + 1)


def test_bytes_that_decode_as_nothing_are_named():
    """A sweep that stops at an undecodable byte refuses what lies past it, saying where."""
    from types import SimpleNamespace

    from loader.image import PERM_R, PERM_X, Segment
    code = bytes.fromhex("90 90 0f 0b ff ff 90 90")     # nop nop ud2, then ff /7: no instruction
    image = SimpleNamespace(arch="x86_64", bits=64, path="/bin/x", entry=0x1000,
                            segments=(Segment(0x1000, len(code), len(code), 0, PERM_R | PERM_X, code),),
                            sections={}, code_sections={}, symbols=SymbolTable())
    finder = CodeBoundaries(image)
    finder._anchors = [0x1000]                  # (no CFI to read in a namespace)
    finder.check(0x1002)
    with pytest.raises(NotAnInstruction, match=r"^no instruction decodes at 0x1004 "
                                               r"\(ff ff 90 90\), before 0x1007$"):
        finder.check(0x1007)
