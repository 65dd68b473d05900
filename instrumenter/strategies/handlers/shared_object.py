"""A user handler that is a function of a shared object (`--handler FILE.so:SYMBOL`), copied
into a trampoline page whole (US 9,336,001, FIG. 4 block 440). Read with pyelftools.

A shared object is linked already: its PT_LOAD segments keep their distances (code reaches data
PC-relative), so they are copied as one image, from the lowest segment's page on, and only the
dynamic relocations are applied for where the image lands (System V psABIs: AMD64 4.4, i386
4-27): RELATIVE (base + addend), and GLOB_DAT, JUMP_SLOT, 64/32 to symbols the object defines.
A relocation to a symbol it does not define (libc's `puts`), TLS, or a copy relocation is
refused with one line. The image lands in the read/write/execute XOL page: a handler that writes
its own .data costs the emulator a retranslation of the page on each such write (an object file,
object_file.py, keeps its writable sections apart).
"""
from __future__ import annotations

import struct

from elftools.elf.relocation import RelocationSection

from ...errors import InstrumenterError

# type -> (name, kind): "B" base + addend, "S" symbol (+ addend), "S+A" symbol + addend
_X86_64 = {8: ("R_X86_64_RELATIVE", "B"), 6: ("R_X86_64_GLOB_DAT", "S"),
           7: ("R_X86_64_JUMP_SLOT", "S"), 1: ("R_X86_64_64", "S+A")}
_I386 = {8: ("R_386_RELATIVE", "B"), 6: ("R_386_GLOB_DAT", "S"), 7: ("R_386_JMP_SLOT", "S"),
         1: ("R_386_32", "S+A")}


class SharedHandler:
    """The function `symbol` of an ELF shared object, ready to be placed at any address."""

    def __init__(self, path: str, symbol: str, elf, arch: str):
        self.path, self.symbol, self.arch = path, symbol, arch
        loads = [s for s in elf.iter_segments() if s["p_type"] == "PT_LOAD"]
        if not loads:
            raise InstrumenterError(f"handler {path}: no PT_LOAD segment")
        self.low = min(s["p_vaddr"] for s in loads) & ~0xFFF
        high = max(s["p_vaddr"] + s["p_memsz"] for s in loads)
        self.span = high - self.low
        self.segments = [(s["p_vaddr"] - self.low, s.data()) for s in loads]
        self.entry_offset = self._entry(elf) - self.low
        self.relocs = self._relocations(elf)

    def _entry(self, elf) -> int:
        for name in (".dynsym", ".symtab"):
            table = elf.get_section_by_name(name)
            for sym in (table.iter_symbols() if table is not None else ()):
                if sym.name == self.symbol and sym["st_shndx"] != "SHN_UNDEF" \
                        and sym["st_info"]["type"] == "STT_FUNC":
                    return sym["st_value"]
        raise InstrumenterError(f"handler {self.path}: no function {self.symbol!r} defined in it")

    def _relocations(self, elf) -> list[tuple[int, str, int | None, int | None]]:
        """(offset in the image, kind, symbol value or None, addend or None for REL)."""
        table = _X86_64 if self.arch == "x86_64" else _I386
        relocs = []
        for sec in elf.iter_sections():
            if not isinstance(sec, RelocationSection) or not sec["sh_flags"] & 2:   # SHF_ALLOC
                continue
            symbols = elf.get_section(sec["sh_link"])
            for rel in sec.iter_relocations():
                kind = table.get(rel["r_info_type"])
                sym = symbols.get_symbol(rel["r_info_sym"]) if rel["r_info_sym"] else None
                where = f"{sec.name}+{rel['r_offset']:#x}"
                if kind is None:
                    raise InstrumenterError(f"handler {self.path}: relocation type "
                                            f"{rel['r_info_type']} at {where} cannot be applied "
                                            "in a trampoline page")
                value = None
                if kind[1] != "B":
                    if sym is None or sym["st_shndx"] == "SHN_UNDEF":
                        raise InstrumenterError(
                            f"handler {self.path}: {kind[0]} at {where} refers to "
                            f"{sym.name if sym is not None else '?'!r}, which is not in the object "
                            "(a handler cannot call or read outside its own code)")
                    value = sym["st_value"] - self.low
                relocs.append((rel["r_offset"] - self.low, kind[1], value,
                               rel["r_addend"] if sec.is_RELA() else None))
        return relocs

    @property
    def code_size(self) -> int:
        return self.span

    data_size = 0

    def image(self, code_at: int, data_at: int) -> tuple[bytes, int, bytes]:
        code = bytearray(self.span)
        for offset, data in self.segments:
            code[offset:offset + len(data)] = data
        word, fmt = (8, "<Q") if self.arch == "x86_64" else (4, "<I")
        mask = (1 << (8 * word)) - 1
        for offset, kind, value, addend in self.relocs:
            a = addend if addend is not None else struct.unpack_from(fmt, code, offset)[0]
            if kind == "B":
                result = code_at + a
            elif kind == "S":
                result = code_at + value
            else:
                result = code_at + value + a
            struct.pack_into(fmt, code, offset, result & mask)
        return bytes(code), code_at + self.entry_offset, b""
