"""The program interpreter of a dynamic program: ld.so, mapped beside the program at exec.

Linux's load_elf_binary (fs/binfmt_elf.c) opens the file PT_INTERP names in the caller's root,
checks that it is an ELF file for the same machine (ELIBBAD otherwise), and maps it with
load_elf_interp: an ET_DYN interpreter goes where mmap puts a mapping of its whole span, which
with address randomization off is the top of the mmap area (just below mmap_base, see
kernel_model/memory/layout.py). Control then starts at the interpreter's entry, and the auxiliary
vector tells it where the program is (AT_PHDR, AT_ENTRY) and where it was put itself (AT_BASE).
"""
from __future__ import annotations

from typing import NamedTuple

from loader.elf import load_elf
from loader.errors import LoaderError
from loader.image import LoadedImage

from . import errno as E
from .errno import GuestErrno
from .memory.layout import LAYOUTS, PAGE
from .memory.vm import page_up


# Where brk starts for an ET_DYN program without PT_INTERP (ld.so run as a program, a
# static-pie): load_elf_binary moves it to ELF_ET_DYN_BASE, page aligned, so that the heap
# does not grow into the mmap region the loader itself sits in. x86-64: DEFAULT_MAP_WINDOW / 3
# * 2 = 0x555555554aaa (arch/x86/include/asm/elf.h); i386: the PIE base this model uses.
LOADER_BRK = {"i386": 0x5655_5000, "x86_64": page_up(0x7FFF_FFFF_F000 // 3 * 2)}


class Interpreter(NamedTuple):
    image: LoadedImage      # relocated to where it is mapped
    base: int               # AT_BASE: the address its first page is mapped at
    path: bytes             # the resolved guest path (the name /proc/PID/maps shows)


def span_of(image: LoadedImage) -> tuple[int, int]:
    """The page-aligned range [lo, hi) an image's PT_LOADs cover."""
    lo = image.segments[0].vaddr & ~(PAGE - 1)
    hi = page_up(max(seg.vaddr + seg.memsz for seg in image.segments))
    return lo, hi


def place_interpreter(space, program: LoadedImage, data: bytes, path: bytes) -> Interpreter:
    """Build the interpreter's image at the address mmap would give its span (ENOEXEC/ELIBBAD
    for a file Linux would refuse). Nothing is mapped yet."""
    try:
        probe = load_elf(data, path.decode(errors="replace"))
    except LoaderError as e:
        raise GuestErrno(E.ELIBBAD, f"interpreter {path.decode(errors='replace')}: {e}") from None
    if probe.arch != program.arch:
        raise GuestErrno(E.ELIBBAD, f"interpreter {path.decode(errors='replace')} is {probe.arch}, "
                                    f"the program is {program.arch}")
    if not probe.is_pie:
        return Interpreter(probe, span_of(probe)[0], path)    # ET_EXEC: where its headers say
    lo, hi = span_of(probe)
    base = space.vm.find_free(hi - lo)
    try:
        image = load_elf(data, path.decode(errors="replace"), pie_base=base)
    except LoaderError as e:
        raise GuestErrno(E.ENOMEM, f"interpreter {path.decode(errors='replace')}: {e}") from None
    return Interpreter(image, base, path)



def place_loader(program: LoadedImage, data: bytes) -> LoadedImage:
    """An ET_DYN without PT_INTERP ("loaders": ld.so run directly, a static-pie) goes into the
    mmap region like any mapping of its span (load_elf_binary: load_bias 0, no MAP_FIXED), on
    a fresh address space the top of that region: just below mmap_base."""
    lo, hi = span_of(program)
    base = LAYOUTS[program.arch].mmap_base - (hi - lo)
    try:
        return load_elf(data, program.path, pie_base=base)
    except LoaderError as e:
        raise GuestErrno(E.ENOMEM, str(e)) from None
