"""The ELF header and program header table, read with `struct` into ints.

An exec reads only these two structures (fs/binfmt_elf.c load_elf_binary: the header from the
first BINPRM_BUF_SIZE bytes, then load_elf_phdrs), and their layouts are fixed by the System V
gABI ("ELF Header", "Program Header"; ElfN_Ehdr and ElfN_Phdr in include/uapi/linux/elf.h), so
they are unpacked directly: pyelftools, which reads symbols and DWARF elsewhere (elf_symbols.py,
cfi.py), built a construct parser per class and its import alone was a large part of a
start-up (with pdb, which its construct package imports; bench/startup.py --importtime lists
the costly imports). x86 is little-endian in both classes (ELFDATA2LSB).
"""
from __future__ import annotations

import struct
from typing import NamedTuple

from loader.program_headers import ProgramHeader

ELF_MAGIC = b"\x7fELF"
# e_ident is a byte array whose class and byte order decide which structure set applies, so
# these two bytes are read by index before any structure can be chosen (as ELFFile does too).
EI_CLASS, EI_DATA = 4, 5

# Elf32_Ehdr / Elf64_Ehdr from e_type on (after e_ident[16]): e_type, e_machine, e_version,
# e_entry, e_phoff, e_shoff, e_flags, e_ehsize, e_phentsize, e_phnum (then e_shentsize, e_shnum,
# e_shstrndx, not read).
_EHDR = {32: struct.Struct("<16xHHIIIIIHHH"), 64: struct.Struct("<16xHHIQQQIHHH")}
# Elf32_Phdr: p_type, p_offset, p_vaddr, p_paddr, p_filesz, p_memsz, p_flags, p_align.
# Elf64_Phdr moves p_flags up beside p_type (for the alignment of the 8-byte fields).
_PHDR = {32: struct.Struct("<IIIIIIII"), 64: struct.Struct("<IIQQQQQQ")}


class ElfHeader(NamedTuple):
    """The Elf32/64_Ehdr fields the loader checks, as numbers."""
    type: int
    machine: int
    entry: int
    phoff: int
    phentsize: int
    phnum: int


def read_header(data: bytes, bits: int) -> ElfHeader:
    """The ELF header as ELFCLASS`bits` lays it out; `data` must hold at least the whole header.
    e_type and e_machine sit at the same offsets in both classes, so bits=32 reads them from any
    ELF file long enough for an Elf32_Ehdr."""
    e_type, machine, _version, entry, phoff, _shoff, _flags, _ehsize, phentsize, phnum = \
        _EHDR[bits].unpack_from(data)
    return ElfHeader(type=e_type, machine=machine, entry=entry, phoff=phoff, phentsize=phentsize,
                     phnum=phnum)


def read_program_headers(data: bytes, bits: int, phoff: int, phnum: int) -> list[ProgramHeader]:
    """The program header table; the caller has checked that it lies inside `data`."""
    layout = _PHDR[bits]
    headers = []
    for index in range(phnum):
        fields = layout.unpack_from(data, phoff + index * layout.size)
        if bits == 64:
            p_type, flags, offset, vaddr, _paddr, filesz, memsz, _align = fields
        else:
            p_type, offset, vaddr, _paddr, filesz, memsz, flags, _align = fields
        headers.append(ProgramHeader(index, p_type, flags, offset, vaddr, filesz, memsz))
    return headers
