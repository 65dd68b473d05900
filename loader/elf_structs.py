"""pyelftools reads the ELF header and program headers; this module turns what it reads into ints.

pyelftools' `ELFStructs` holds the structure definitions of one ELF class. `ELFFile` would build a
fresh set for every file it opens (construct objects built again each time, and its import
pulls in the DWARF readers); an exec needs only two structures, so one set per class is built on
first use and kept. pyelftools decodes enum fields into names ('ET_EXEC', 'PT_LOAD'); the loader's
rules and messages work on the numbers, so the names are mapped back through pyelftools' own
enum tables. Nothing of pyelftools is imported until a file is read.
"""
from __future__ import annotations

import functools
from typing import NamedTuple

from loader.errors import LoaderError
from loader.program_headers import ProgramHeader

ELF_MAGIC = b"\x7fELF"
# e_ident is a byte array whose class and byte order decide which structure set applies, so
# these two bytes are read by index before any structure can be chosen (as ELFFile does too).
EI_CLASS, EI_DATA = 4, 5


class ElfHeader(NamedTuple):
    """The Elf32/64_Ehdr fields the loader checks, as numbers."""
    type: int
    machine: int
    entry: int
    phoff: int
    phentsize: int
    phnum: int


@functools.cache
def _structs(bits: int):
    """pyelftools' little-endian ELF header structure for ELFCLASS32 (bits=32) or ELFCLASS64."""
    from elftools.elf.structs import ELFStructs  # a costly import: paid by the first read

    structs = ELFStructs(little_endian=True, elfclass=bits)
    structs.create_basic_structs()
    return structs


@functools.cache
def _phdr_struct(bits: int):
    """Elf_Phdr of the class; pyelftools builds it with its other structures (once)."""
    structs = _structs(bits)
    structs.create_advanced_structs()  # no e_machine: p_type decodes with the generic PT_* names
    return structs.Elf_Phdr


@functools.cache
def _enums():
    from elftools.elf import enums
    return enums


def _number(value, names) -> int:
    """pyelftools gives an enum field as its name when it knows the value, else as the int."""
    return value if isinstance(value, int) else names[value]


def _parse(struct, data: bytes, what: str):
    from elftools.construct import ConstructError
    try:
        return struct.parse(data)
    except ConstructError as exc:  # a short or undecodable field: the file is malformed
        raise LoaderError(f"malformed {what}: {type(exc).__name__}: {exc}".splitlines()[0]) from None


def read_header(data: bytes, bits: int) -> ElfHeader:
    """The ELF header as ELFCLASS`bits` lays it out; `data` must hold at least the whole header.
    e_type and e_machine sit at the same offsets in both classes, so bits=32 reads them from any
    ELF file long enough for an Elf32_Ehdr."""
    fields = _parse(_structs(bits).Elf_Ehdr, data, "ELF header")
    enums = _enums()
    return ElfHeader(type=_number(fields["e_type"], enums.ENUM_E_TYPE),
                     machine=_number(fields["e_machine"], enums.ENUM_E_MACHINE),
                     entry=fields["e_entry"], phoff=fields["e_phoff"], phentsize=fields["e_phentsize"],
                     phnum=fields["e_phnum"])


def read_program_headers(data: bytes, bits: int, phoff: int, phnum: int) -> list[ProgramHeader]:
    """The program header table; the caller has checked that it lies inside `data`."""
    struct = _phdr_struct(bits)
    size = struct.sizeof()
    p_types = _enums().ENUM_P_TYPE_BASE
    headers = []
    for index in range(phnum):
        start = phoff + index * size
        ph = _parse(struct, data[start:start + size], f"program header #{index}")
        headers.append(ProgramHeader(index, _number(ph["p_type"], p_types), ph["p_flags"], ph["p_offset"],
                                     ph["p_vaddr"], ph["p_filesz"], ph["p_memsz"]))
    return headers
