"""The dynamic relocations that fill GOT slots with function addresses, read from an image's
PT_DYNAMIC as ld.so reads them (System V gABI "Dynamic Section", "Relocation"; the x86-64 and
i386 psABIs for the types).

A tool needs them to learn, after the fact, what ld.so bound: a probe on an IFUNC (strlen)
first asked for after ld.so called the resolver must go where the resolver pointed, and the
GOT slots that ld.so filled hold that address (instrumenter/tracing/ifunc.py). gdb reads the
same slots for `info symbol` on a PLT target.

Everything is read from the loaded segments (the dynamic table, the relocation tables and
the dynamic symbol table all lie inside PT_LOADs), so nothing else of the file is kept.
"""
from __future__ import annotations

import struct
from typing import NamedTuple

from loader.image import LoadedImage

DT_NULL, DT_PLTRELSZ, DT_STRTAB, DT_SYMTAB = 0, 2, 5, 6
DT_RELA, DT_RELASZ, DT_REL, DT_RELSZ, DT_JMPREL = 7, 8, 17, 18, 23

# The types that store a function's address in a slot: (GLOB_DAT, JUMP_SLOT, IRELATIVE) and the
# plain word relocation, which a function pointer in data gets (x86-64 psABI table 4.9; i386).
TYPES = {
    64: {6: "glob_dat", 7: "jump_slot", 37: "irelative", 1: "word"},    # R_X86_64_*
    32: {6: "glob_dat", 7: "jump_slot", 42: "irelative", 1: "word"},    # R_386_*
}


class GotSlot(NamedTuple):
    address: int            # the slot, relocated where the image is mapped
    kind: str               # "glob_dat", "jump_slot", "word" (named symbol) or "irelative"
    symbol: str | None      # the symbol whose address ld.so stores there (None: IRELATIVE)
    resolver: int | None    # IRELATIVE: the resolver ld.so calls, relocated (its addend)
    lazy: int | None        # JUMP_SLOT: what the slot holds until bound (its PLT stub, relocated:
                            # ld.so only adds the load bias to a lazy slot)


class _Reader:
    """Little-endian reads from the image's loaded bytes at unrelocated-plus-bias addresses."""

    def __init__(self, image: LoadedImage):
        self.image = image
        self.word = image.bits // 8

    def bytes_at(self, address: int, size: int) -> bytes | None:
        for seg in self.image.segments:
            if seg.vaddr <= address and address + size <= seg.vaddr + seg.filesz:
                start = address - seg.vaddr
                return seg.data[start:start + size]
        return None

    def words(self, address: int, count: int) -> tuple[int, ...] | None:
        raw = self.bytes_at(address, count * self.word)
        if raw is None:
            return None
        return struct.unpack(f"<{count}{'Q' if self.word == 8 else 'I'}", raw)

    def string(self, address: int) -> str | None:
        for seg in self.image.segments:
            if seg.vaddr <= address < seg.vaddr + seg.filesz:
                start = address - seg.vaddr
                end = seg.data.find(b"\0", start)
                return seg.data[start:end if end >= 0 else None].decode("utf-8", "replace")
        return None


def dynamic_table(image: LoadedImage) -> dict[int, int]:
    """The first value of each tag of PT_DYNAMIC, up to DT_NULL ({} for a static image)."""
    if not image.dynamic:
        return {}
    reader, table, address = _Reader(image), {}, image.dynamic
    while True:
        entry = reader.words(address, 2)
        if entry is None or entry[0] == DT_NULL:
            return table
        table.setdefault(entry[0], entry[1])
        address += 2 * reader.word


def got_slots(image: LoadedImage) -> list[GotSlot]:
    """Every slot ld.so fills with a function's (or an IFUNC's chosen) address: the REL/RELA
    table and the PLT's (DT_JMPREL). Unreadable tables give what could be read."""
    table = dynamic_table(image)
    if not table:
        return []
    bias, rela = image.load_bias, DT_RELA in table or image.bits == 64
    reader = _Reader(image)
    slots = []
    for start_tag, size_tag in ((DT_RELA, DT_RELASZ), (DT_REL, DT_RELSZ), (DT_JMPREL, DT_PLTRELSZ)):
        if start_tag in table and size_tag in table:
            slots += _slots(reader, table, table[start_tag] + bias, table[size_tag], rela, bias)
    return slots


def _slots(reader: _Reader, table: dict, start: int, size: int, rela: bool, bias: int) -> list[GotSlot]:
    word, types = reader.word, TYPES[reader.image.bits]
    entry_size = word * (3 if rela else 2)
    out = []
    for at in range(start, start + size - entry_size + 1, entry_size):
        fields = reader.words(at, 3 if rela else 2)
        if fields is None:
            break
        offset, info = fields[0], fields[1]
        kind_number, symbol_index = (info & 0xFFFFFFFF, info >> 32) if word == 8 else (info & 0xFF, info >> 8)
        kind = types.get(kind_number)
        if kind is None:
            continue
        slot = offset + bias
        if kind == "irelative":
            # RELA carries the resolver in the addend; REL (i386) in the slot's own bytes.
            addend = fields[2] if rela else (reader.words(slot, 1) or (None,))[0]
            if addend is not None:
                out.append(GotSlot(slot, kind, None, addend + bias, None))
        elif symbol_index:
            name = _symbol_name(reader, table, symbol_index, bias)
            if name:
                initial = (reader.words(slot, 1) or (None,))[0] if kind == "jump_slot" else None
                out.append(GotSlot(slot, kind, name, None, None if initial is None else initial + bias))
    return out


def _symbol_name(reader: _Reader, table: dict, index: int, bias: int) -> str | None:
    """The name of dynamic symbol `index` (Elf64_Sym: 24 bytes, st_name first; Elf32_Sym: 16)."""
    if DT_SYMTAB not in table or DT_STRTAB not in table:
        return None
    size = 24 if reader.word == 8 else 16
    raw = reader.bytes_at(table[DT_SYMTAB] + bias + index * size, 4)
    if raw is None:
        return None
    return reader.string(table[DT_STRTAB] + bias + struct.unpack("<I", raw)[0])
