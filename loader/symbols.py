"""Address <-> name: the symbol table probes and reports use to name code ("fib+0x12")."""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import Iterable, Iterator, NamedTuple


class Symbol(NamedTuple):
    """A function or data object from the symbol table; `addr` already includes the load bias."""
    name: str
    addr: int
    size: int
    kind: str  # "func", "ifunc" (STT_GNU_IFUNC: `addr` is its resolver) or "object"


class _Ranges:
    """Symbols of one kind sorted by start address, answering "which one contains addr"."""

    def __init__(self, symbols: tuple[Symbol, ...]):
        self.symbols = symbols
        self.starts = [sym.addr for sym in symbols]
        # Any symbol that can contain addr starts after addr - max_size: bounds the backward scan.
        self.max_size = max((sym.size for sym in symbols), default=0)

    def containing(self, addr: int) -> Symbol | None:
        i = bisect_right(self.starts, addr)
        while i > 0:
            i -= 1
            sym = self.symbols[i]
            if sym.addr + self.max_size <= addr:
                return None
            if sym.addr <= addr < sym.addr + sym.size:
                return self._first_at(sym.addr, addr)
        return None

    def _first_at(self, start: int, addr: int) -> Symbol:
        """Among names sharing the innermost start address, the earliest given one wins (aliases)."""
        i = bisect_left(self.starts, start)
        while not self.symbols[i].addr + self.symbols[i].size > addr:
            i += 1
        return self.symbols[i]


class SymbolTable:
    """Function and object symbols, sorted by address. When several symbols share an address,
    the one given first wins lookups (the ELF reader puts global names before weak and local)."""

    def __init__(self, symbols: Iterable[Symbol] = ()):
        ordered = tuple(sorted(symbols, key=lambda sym: sym.addr))  # stable: keeps the given tie order
        self._all = ordered
        self._by_name: dict[str, Symbol] = {}
        for sym in ordered:
            self._by_name.setdefault(sym.name, sym)
        # An IFUNC's resolver is code too: it names addresses like a function.
        self._functions = _Ranges(tuple(sym for sym in ordered if sym.kind in ("func", "ifunc")))
        self._objects = _Ranges(tuple(sym for sym in ordered if sym.kind == "object"))

    def __len__(self) -> int:
        return len(self._all)

    def __iter__(self) -> Iterator[Symbol]:
        return iter(self._all)

    def lookup(self, name: str) -> Symbol | None:
        return self._by_name.get(name)

    def function_at(self, addr: int) -> Symbol | None:
        """The function whose [addr, addr+size) contains `addr` (the innermost if they nest)."""
        return self._functions.containing(addr)

    def object_at(self, addr: int) -> Symbol | None:
        return self._objects.containing(addr)

    def symbolize(self, addr: int) -> str:
        """"fib+0x12", "fib" at its first byte, or "0x401234" when no symbol covers addr."""
        sym = self.function_at(addr) or self.object_at(addr)
        if sym is None:
            return f"{addr:#x}"
        offset = addr - sym.addr
        return f"{sym.name}+{offset:#x}" if offset else sym.name

    def functions(self) -> tuple[Symbol, ...]:
        return self._functions.symbols

    def objects(self) -> tuple[Symbol, ...]:
        return self._objects.symbols
