"""The loader on real toolchain output: the sample programs and Debian's static busybox."""
from __future__ import annotations

import pytest

from loader.elf import detect_arch, load_elf_file
from loader.image import PERM_X
from loader.stack import build_initial_stack

ARCHES = pytest.mark.parametrize("arch, bits", [("i386", 32), ("x86_64", 64)])


@ARCHES
@pytest.mark.parametrize("name", ["hello", "fib"])
def test_sample_loads_as_a_static_executable(sample_binary, arch, bits, name):
    path = sample_binary(arch, name)
    image = load_elf_file(str(path))
    assert (image.arch, image.bits, image.is_pie, image.interp) == (arch, bits, False, None)
    assert detect_arch(path.read_bytes()) == arch
    executable = [seg for seg in image.segments if seg.perms & PERM_X]
    assert any(seg.vaddr <= image.entry < seg.vaddr + seg.memsz for seg in executable)
    # AT_PHDR must point at the program headers as mapped: their bytes are the file's e_phoff bytes.
    raw = path.read_bytes()
    phoff = int.from_bytes(raw[0x1C:0x20], "little") if bits == 32 else int.from_bytes(raw[0x20:0x28], "little")
    mapped = next(seg for seg in image.segments if seg.vaddr <= image.phdr_addr < seg.vaddr + seg.filesz)
    start = image.phdr_addr - mapped.vaddr
    assert mapped.data[start:start + image.phnum * image.phent] == raw[phoff:phoff + image.phnum * image.phent]
    assert image.symbols.lookup("main") is not None


@ARCHES
def test_fib_symbol_bounds(sample_binary, arch, bits):
    image = load_elf_file(str(sample_binary(arch, "fib")))
    fib = image.symbols.lookup("fib")
    assert fib.kind == "func" and fib.size > 0
    assert image.symbols.function_at(fib.addr + fib.size - 1) == fib
    assert image.symbols.symbolize(fib.addr + 1) == "fib+0x1"
    assert image.symbols.function_at(fib.addr + fib.size) != fib


@ARCHES
def test_sample_initial_stack(sample_binary, arch, bits):
    image = load_elf_file(str(sample_binary(arch, "hello")))
    stack = build_initial_stack(image, [b"hello"], [b"PATH=/bin"], stack_top=0xBFFFF000 if bits == 32 else
                                0x7FFFFFFFF000, random16=bytes(16), execfn=b"/bin/hello", platform=b"x86_64")
    assert stack.sp % 16 == 0 and dict(stack.auxv)[3] == image.phdr_addr


def test_debian_static_busybox(busybox_static):
    image = load_elf_file(str(busybox_static))
    assert (image.arch, image.is_pie, image.load_bias) == ("x86_64", False, 0)
    assert len(image.segments) >= 3 and image.phdr_addr != 0
    assert any(seg.perms & PERM_X and seg.vaddr <= image.entry < seg.vaddr + seg.memsz for seg in image.segments)
    assert image.symbols.symbolize(image.entry) == f"{image.entry:#x}" or image.symbols.function_at(image.entry)
