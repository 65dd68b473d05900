"""Reads function and object symbols out of a lief ELF binary into a SymbolTable."""
from __future__ import annotations

import warnings

from loader.image import Segment, Symbol
from loader.symbols import SymbolTable

STT_OBJECT, STT_FUNC = 1, 2
STB_LOCAL, STB_GLOBAL, STB_WEAK = 0, 1, 2
SHN_UNDEF = 0
# When several names share an address (musl's weak_alias, local/global twins), the global
# definition is the name a person expects: rank it first so it wins function_at/symbolize.
BINDING_RANK = {STB_GLOBAL: 0, STB_WEAK: 1, STB_LOCAL: 2}


def _inside_segments(addr: int, segments: tuple[Segment, ...]) -> bool:
    return any(seg.vaddr <= addr < seg.vaddr + seg.memsz for seg in segments)


def _symbol_rows(binary) -> list[tuple[str, int, int, int, int]]:
    """(name, value, size, type, binding) of .symtab, then .dynsym (a stripped static-pie keeps some)."""
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # lief warns on enum values it does not know
        for group in (binary.symtab_symbols, binary.dynamic_symbols):
            for sym in group:
                if sym.shndx == SHN_UNDEF or not sym.name:
                    continue
                rows.append((sym.name, int(sym.value), int(sym.size), int(sym.type), int(sym.binding)))
    return rows


def symbols_from_lief(binary, bias: int, segments: tuple[Segment, ...]) -> SymbolTable:
    """Defined FUNC/OBJECT symbols that point into the loaded image, relocated by `bias`."""
    picked: dict[tuple[str, int], tuple] = {}
    for name, value, size, stype, binding in _symbol_rows(binary):
        if stype not in (STT_FUNC, STT_OBJECT):
            continue
        addr = value + bias
        if not _inside_segments(addr, segments):
            continue
        kind = "func" if stype == STT_FUNC else "object"
        key = (name, addr)
        rank = BINDING_RANK.get(binding, 3)
        if key not in picked or rank < picked[key][0]:
            picked[key] = (rank, Symbol(name=name, addr=addr, size=size, kind=kind))
    ordered = sorted(picked.values(), key=lambda item: (item[1].addr, item[0], item[1].name))
    return SymbolTable(sym for _, sym in ordered)
