"""What the loader produces: an ELF executable described for the kernel that will map it.

Nothing here knows about the emulator; `kernel_model` maps the segments and builds the stack.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from loader.symbols import SymbolTable

# Our permission bits (not the ELF PF_* bits, whose X and R are swapped): the kernel model maps
# them onto page protections directly.
PERM_R, PERM_W, PERM_X = 1, 2, 4


@dataclass(frozen=True)
class Segment:
    """One PT_LOAD: `data` (len == filesz) goes at `vaddr`, the rest up to memsz is zero (bss)."""
    vaddr: int
    memsz: int
    filesz: int
    offset: int
    perms: int
    data: bytes


@dataclass(frozen=True)
class Symbol:
    """A function or data object from the symbol table; `addr` already includes the load bias."""
    name: str
    addr: int
    size: int
    kind: str  # "func" or "object"


@dataclass(frozen=True)
class LoadedImage:
    """A validated executable, relocated to where it will live (static-pie already biased)."""
    path: str
    arch: str  # "i386" or "x86_64"
    bits: int
    entry: int
    segments: tuple[Segment, ...]  # sorted by vaddr, non-overlapping
    phdr_addr: int  # guest address of the program header table (AT_PHDR); 0 when not mapped, as Linux
    phent: int
    phnum: int
    interp: str | None
    is_pie: bool
    load_bias: int
    symbols: "SymbolTable"

    @property
    def word_size(self) -> int:
        return self.bits // 8
