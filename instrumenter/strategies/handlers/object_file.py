"""A user handler compiled to an ELF relocatable object (`--handler FILE.o:SYMBOL`), relocated
into a trampoline page (US 9,336,001, FIG. 4 block 440: the user breakpoint handler is copied to the
page). Read with pyelftools.

The object's allocated sections are laid out twice over: the read-only ones (code, .rodata) in
the page after the trampoline, the writable ones (.data, .bss) in a read/write data area near it
(a store into a page of translated code would make the emulator retranslate it on every hit:
instrumenter/strategies/native.py). Then every relocation is applied for those two addresses
(System V psABIs' relocation tables: AMD64 4.4, i386 4-27):

  x86-64: R_X86_64_64, PC32, PLT32 (to a function of the object), 32, 32S, PC64, and
          GOTPCREL/GOTPCRELX/REX_GOTPCRELX (through a GOT of the object's own entries)
  i386:   R_386_32, PC32, PLT32, GOTPC and GOTOFF (the -fPIC idiom: get_pc_thunk + GOT base)

Anything else is refused with one line naming the relocation and the symbol: an undefined
symbol (the handler would call or read outside its object: libc is not there), a TLS or a
GOT32 relocation (compile with -fPIC -fvisibility=hidden, without thread-locals). Debug, note
and unwind sections are not copied (nothing runs them).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from elftools.common.exceptions import ELFError
from elftools.elf.constants import SH_FLAGS
from elftools.elf.elffile import ELFFile
from elftools.elf.relocation import RelocationSection

from ...errors import InstrumenterError

ARCH_OF_MACHINE = {"EM_X86_64": "x86_64", "EM_386": "i386"}
_SKIPPED = (".eh_frame", ".note", ".comment", ".debug", ".llvm")

# name, (field size, pc-relative, signed range check or None (zero-extended)), kind
_X86_64 = {1: ("R_X86_64_64", 8, "S"), 2: ("R_X86_64_PC32", 4, "PC"), 4: ("R_X86_64_PLT32", 4, "PC"),
           10: ("R_X86_64_32", 4, "U"), 11: ("R_X86_64_32S", 4, "S"), 24: ("R_X86_64_PC64", 8, "PC"),
           9: ("R_X86_64_GOTPCREL", 4, "GOTPC"), 41: ("R_X86_64_GOTPCRELX", 4, "GOTPC"),
           42: ("R_X86_64_REX_GOTPCRELX", 4, "GOTPC")}
_I386 = {1: ("R_386_32", 4, "S"), 2: ("R_386_PC32", 4, "PC"), 4: ("R_386_PLT32", 4, "PC"),
         9: ("R_386_GOTOFF", 4, "GOTOFF"), 10: ("R_386_GOTPC", 4, "GOTBASE")}
_GOT_NAME = "_GLOBAL_OFFSET_TABLE_"


@dataclass(frozen=True)
class _Section:
    index: int
    name: str
    data: bytes
    size: int
    align: int
    writable: bool


@dataclass(frozen=True)
class _Reloc:
    section: int           # the section index the relocation patches
    offset: int
    type: int
    symbol: str
    sym_section: object    # section index (int), "SHN_ABS", "SHN_UNDEF"
    sym_value: int
    addend: int | None     # None: REL (the addend is in the field)


def load_object(path: str, symbol: str):
    """The handler `symbol` of the ELF file at `path`: a relocatable object (HandlerObject) or
    a shared object (shared_object.py SharedHandler); one-line InstrumenterError otherwise."""
    from .shared_object import SharedHandler
    try:
        with open(path, "rb") as f:
            elf = ELFFile(f)
            machine = elf["e_machine"]
            if machine not in ARCH_OF_MACHINE:
                raise InstrumenterError(f"handler {path}: {machine} is not x86 or x86-64")
            if elf["e_type"] == "ET_DYN":
                return SharedHandler(path, symbol, elf, ARCH_OF_MACHINE[machine])
            if elf["e_type"] != "ET_REL":
                raise InstrumenterError(f"handler {path}: {elf['e_type']} is neither a "
                                        "relocatable object (.o) nor a shared object (.so)")
            return HandlerObject(path, symbol, elf, ARCH_OF_MACHINE[machine])
    except OSError as e:
        raise InstrumenterError(f"handler {path}: {e.strerror}") from None
    except ELFError as e:
        raise InstrumenterError(f"handler {path}: not an ELF object ({e})") from None


class HandlerObject:
    """An ELF .o and the function `symbol` in it, ready to be placed at any address."""

    def __init__(self, path: str, symbol: str, elf: ELFFile, arch: str):
        self.path, self.symbol, self.arch = path, symbol, arch
        self._read(elf)

    def _read(self, elf: ELFFile) -> None:
        self.sections: dict[int, _Section] = {}
        for index, sec in enumerate(elf.iter_sections()):
            if not sec["sh_flags"] & SH_FLAGS.SHF_ALLOC or sec.name.startswith(_SKIPPED):
                continue
            nobits = sec["sh_type"] == "SHT_NOBITS"
            self.sections[index] = _Section(index, sec.name, b"" if nobits else sec.data(),
                                            sec["sh_size"], max(sec["sh_addralign"], 1),
                                            bool(sec["sh_flags"] & SH_FLAGS.SHF_WRITE))
        symtab = elf.get_section_by_name(".symtab")
        if symtab is None:
            raise InstrumenterError(f"handler {self.path}: no symbol table")
        symbols = list(symtab.iter_symbols())
        entry = [s for s in symbols if s.name == self.symbol and s["st_shndx"] != "SHN_UNDEF"]
        if not entry:
            raise InstrumenterError(f"handler {self.path}: no symbol {self.symbol!r} defined in it")
        self.entry_section, self.entry_value = entry[0]["st_shndx"], entry[0]["st_value"]
        if self.entry_section not in self.sections or self.sections[self.entry_section].writable:
            raise InstrumenterError(f"handler {self.path}: {self.symbol!r} is not in a code section")
        self.relocs: list[_Reloc] = []
        for sec in elf.iter_sections():
            if isinstance(sec, RelocationSection) and sec["sh_info"] in self.sections:
                for rel in sec.iter_relocations():
                    sym = symbols[rel["r_info_sym"]]
                    self.relocs.append(_Reloc(sec["sh_info"], rel["r_offset"], rel["r_info_type"],
                                              _symbol_name(sym, self.sections), sym["st_shndx"],
                                              sym["st_value"],
                                              rel["r_addend"] if sec.is_RELA() else None))
        self._check_relocations()
        self.got_symbols = sorted({r.symbol for r in self.relocs
                                   if self._kind(r) == "GOTPC"})

    # ---- what can be relocated -------------------------------------------------------------
    def _table(self) -> dict:
        return _X86_64 if self.arch == "x86_64" else _I386

    def _kind(self, r: _Reloc) -> str:
        return self._table()[r.type][2]

    def _check_relocations(self) -> None:
        for r in self.relocs:
            where = f"{self.sections[r.section].name}+{r.offset:#x}"
            if r.type not in self._table():
                raise InstrumenterError(f"handler {self.path}: relocation type {r.type} at {where} "
                                        f"({r.symbol or 'no symbol'}) cannot be relocated into a "
                                        "trampoline page (compile with -fPIC -fvisibility=hidden)")
            defined = r.sym_section in self.sections or r.sym_section == "SHN_ABS"
            if not defined and not (r.symbol == _GOT_NAME and self.arch == "i386"):
                raise InstrumenterError(f"handler {self.path}: {self._table()[r.type][0]} at {where} "
                                        f"refers to {r.symbol!r}, which is not in the object (a "
                                        "handler cannot call or read outside its own code)")

    # ---- layout ------------------------------------------------------------------------------
    def _layout(self, writable: bool) -> tuple[dict[int, int], int]:
        offsets, size = {}, 0
        for sec in self.sections.values():
            if sec.writable is writable:
                size = -(-size // sec.align) * sec.align
                offsets[sec.index] = size
                size += sec.size
        return offsets, size

    @property
    def code_size(self) -> int:
        return self._layout(False)[1] + 8 * len(self.got_symbols)

    @property
    def data_size(self) -> int:
        return self._layout(True)[1]

    def image(self, code_at: int, data_at: int) -> tuple[bytes, int, bytes]:
        """(code bytes for `code_at`, the entry address, data bytes for `data_at`)."""
        code_offsets, code_size = self._layout(False)
        data_offsets, data_size = self._layout(True)
        base = {i: code_at + o for i, o in code_offsets.items()}
        base.update({i: data_at + o for i, o in data_offsets.items()})
        code, data = bytearray(code_size), bytearray(data_size)
        for sec in self.sections.values():
            target, offsets = (data, data_offsets) if sec.writable else (code, code_offsets)
            target[offsets[sec.index]:offsets[sec.index] + len(sec.data)] = sec.data
        got_at = code_at + code_size
        got = {name: got_at + 8 * i for i, name in enumerate(self.got_symbols)}
        got_words = bytearray(8 * len(self.got_symbols))
        for r in self.relocs:
            s = self._symbol_address(r, base, got_at)
            if r.symbol in got:
                struct.pack_into("<Q", got_words, got[r.symbol] - got_at, s & (2**64 - 1))
            sec = self.sections[r.section]
            buf, off = (data, data_offsets) if sec.writable else (code, code_offsets)
            self._apply(r, buf, off[r.section] + r.offset, base[r.section] + r.offset, s,
                        got.get(r.symbol), got_at)
        entry = base[self.entry_section] + self.entry_value
        return bytes(code + got_words), entry, bytes(data)

    def _symbol_address(self, r: _Reloc, base: dict[int, int], got_at: int) -> int:
        if r.symbol == _GOT_NAME and r.sym_section == "SHN_UNDEF":
            return got_at
        if r.sym_section == "SHN_ABS":
            return r.sym_value
        return base[r.sym_section] + r.sym_value

    def _apply(self, r: _Reloc, buf: bytearray, at: int, place: int, s: int,
               got_entry: int | None, got_at: int) -> None:
        name, size, kind = self._table()[r.type]
        fmt = {4: "<i", 8: "<q"}[size]
        a = r.addend if r.addend is not None else struct.unpack_from(fmt, buf, at)[0]
        value = {"S": s + a, "U": s + a, "PC": s + a - place, "GOTPC": (got_entry or 0) + a - place,
                 "GOTOFF": s + a - got_at, "GOTBASE": got_at + a - place}[kind]
        if self.arch == "i386":
            value = (value + 0x8000_0000) % 0x1_0000_0000 - 0x8000_0000
        if kind == "U" and 0 <= value < 1 << 32:
            struct.pack_into("<I", buf, at, value)
            return
        if not -(1 << (8 * size - 1)) <= value < 1 << (8 * size - 1):
            raise InstrumenterError(f"handler {self.path}: {name} to {r.symbol!r} does not reach "
                                    f"from {place:#x} (value {value:#x})")
        struct.pack_into(fmt, buf, at, value)


def _symbol_name(sym, sections: dict) -> str:
    if sym.name:
        return sym.name
    if sym["st_info"]["type"] == "STT_SECTION" and sym["st_shndx"] in sections:
        return sections[sym["st_shndx"]].name
    return ""
