"""Function and object symbols of an ELF file, read with pyelftools the first time someone asks.

A run does not need symbols: probes, the debugger and fault reports do. So load_elf keeps a
`SymbolReader` on the image and the section headers and symbol tables are parsed only when the
image's `symbols` are first used (and once per distinct file: load_elf shares images). The same
parse keeps where the allocated sections are (`sections`): a stripped program has no symbol to
find its `.eh_frame` by and, linked -static, no `.eh_frame_hdr` either (loader/cfi.py).
"""
from __future__ import annotations

import io

from loader.image import Segment
from loader.symbols import Symbol, SymbolTable

STT_OBJECT, STT_FUNC = 1, 2
STT_GNU_IFUNC = 10          # STT_LOOS: a function whose address its resolver picks at load time
VERSYM_HIDDEN = 0x8000      # .gnu.version: a non-default version (hypot@GLIBC_2.2.5 beside hypot@@GLIBC_2.35)
KINDS = {STT_FUNC: "func", STT_GNU_IFUNC: "ifunc", STT_OBJECT: "object"}
STB_LOCAL, STB_GLOBAL, STB_WEAK = 0, 1, 2
SHN_UNDEF = 0
# When several names share an address (musl's weak_alias, local/global twins), the global
# definition is the name a person expects: rank it first so it wins function_at/symbolize.
BINDING_RANK = {STB_GLOBAL: 0, STB_WEAK: 1, STB_LOCAL: 2}


def _inside_segments(addr: int, segments: tuple[Segment, ...]) -> bool:
    return any(seg.vaddr <= addr < seg.vaddr + seg.memsz for seg in segments)


def _version_hidden(ndx) -> bool:
    """Whether a .gnu.version entry marks a non-default version. pyelftools gives the reserved
    indexes by name ("VER_NDX_GLOBAL" for an unversioned export, as every symbol of Debian's
    perl, libz or the gconv modules is): those are never hidden."""
    return isinstance(ndx, int) and bool(ndx & VERSYM_HIDDEN)


SHF_ALLOC, SHF_EXECINSTR = 0x2, 0x4


def _allocated_sections(elf) -> dict[str, tuple[int, int]]:
    """name -> (sh_addr, sh_size) of the sections that occupy memory, unrelocated."""
    return {section.name: (section["sh_addr"], section["sh_size"]) for section in elf.iter_sections()
            if section["sh_flags"] & SHF_ALLOC and section.name}


def _code_section_names(elf) -> frozenset[str]:
    """The allocated sections that hold instructions (SHF_EXECINSTR: .init, .plt, .text, .fini)."""
    return frozenset(section.name for section in elf.iter_sections()
                     if section["sh_flags"] & SHF_ALLOC and section["sh_flags"] & SHF_EXECINSTR
                     and section.name and section["sh_size"])


def _symbol_rows(elf) -> list[tuple[str, int, int, int, int, bool]]:
    """(name, value, size, type, binding, hidden) of .symtab, then .dynsym (a stripped
    static-pie or shared library keeps that one); `hidden`: a non-default symbol version."""
    from elftools.elf.enums import ENUM_ST_INFO_BIND, ENUM_ST_INFO_TYPE
    from elftools.elf.sections import SymbolTableSection

    tables = {section.name: section for section in elf.iter_sections() if isinstance(section, SymbolTableSection)}
    versions = elf.get_section_by_name(".gnu.version")
    rows = []
    for name in (".symtab", ".dynsym"):
        if name not in tables:
            continue
        for index, sym in enumerate(tables[name].iter_symbols()):
            if sym["st_shndx"] in (SHN_UNDEF, "SHN_UNDEF") or not sym.name:
                continue
            info = sym["st_info"]
            stype, bind = info["type"], info["bind"]
            hidden = name == ".dynsym" and versions is not None and \
                _version_hidden(versions.get_symbol(index).entry["ndx"])
            rows.append((sym.name, sym["st_value"], sym["st_size"],
                         stype if isinstance(stype, int) else ENUM_ST_INFO_TYPE[stype],
                         bind if isinstance(bind, int) else ENUM_ST_INFO_BIND[bind], hidden))
    return rows


def _underscores(name: str) -> int:
    return len(name) - len(name.lstrip("_"))


def symbols_from_rows(rows, bias: int, segments: tuple[Segment, ...]) -> SymbolTable:
    """Defined FUNC/IFUNC/OBJECT symbols that point into the loaded image, relocated by `bias`.
    A name's non-default versions are dropped when its default one is there: `hypot` is the
    symbol a program linking today gets (hypot@@GLIBC_2.35), as dlsym and gdb resolve it."""
    rows = [row if len(row) == 6 else (*row, False) for row in rows]
    default_names = {row[0] for row in rows if not row[5]}
    picked: dict[tuple[str, int], tuple] = {}
    for name, value, size, stype, binding, hidden in rows:
        kind = KINDS.get(stype)
        if kind is None or (hidden and name in default_names):
            continue
        addr = value + bias
        if not _inside_segments(addr, segments):
            continue
        key = (name, addr)
        rank = BINDING_RANK.get(binding, 3)
        if key not in picked or rank < picked[key][0]:
            picked[key] = (rank, Symbol(name=name, addr=addr, size=size, kind=kind))
    # Among names of one rank, the one with the fewest leading underscores is the public one
    # (glibc exports malloc and __libc_malloc at one address: a user probes `malloc`).
    ordered = sorted(picked.values(), key=lambda item: (item[1].addr, item[0], _underscores(item[1].name),
                                                        item[1].name))
    return SymbolTable(sym for _, sym in ordered)


class SymbolReader:
    """Builds an image's SymbolTable on first call and keeps it. A file whose section headers or
    symbol tables are malformed still runs, as under Linux, which never reads them: its table is
    empty and `problem` says why in one line."""

    __slots__ = ("_data", "_bias", "_segments", "_table", "_sections", "_code", "problem")

    def __init__(self, data: bytes, bias: int, segments: tuple[Segment, ...]):
        self._data, self._bias, self._segments = data, bias, segments
        self._table: SymbolTable | None = None
        self._sections: dict[str, tuple[int, int]] = {}
        self._code: frozenset[str] = frozenset()
        self.problem: str | None = None

    @property
    def sections(self) -> dict[str, tuple[int, int]]:
        """name -> (address, size) of the allocated sections, relocated; {} without section
        headers (the kernel and ld.so never need them)."""
        self()
        return self._sections

    @property
    def code_sections(self) -> frozenset[str]:
        """The names among `sections` that hold instructions (SHF_EXECINSTR)."""
        self()
        return self._code

    def __call__(self) -> SymbolTable:
        if self._table is None:
            from elftools.elf.elffile import ELFFile
            rows = []
            try:
                elf = ELFFile(io.BytesIO(self._data))
                self._sections = {name: (addr + self._bias, size) for name, (addr, size)
                                  in _allocated_sections(elf).items()}
                self._code = _code_section_names(elf)
                rows = _symbol_rows(elf)
            except Exception as exc:  # noqa: BLE001 -- pyelftools raises ELFError, construct
                # errors, and plain IndexError/KeyError/UnicodeDecodeError on corrupt tables
                self.problem = f"unreadable symbol table: {type(exc).__name__}: {exc}".splitlines()[0]
            self._table = symbols_from_rows(rows, self._bias, self._segments)
            self._data = None  # the file's bytes are no longer needed
        return self._table
