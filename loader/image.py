"""What the loader produces: an ELF executable described for the kernel that will map it.

Nothing here knows about the emulator; `kernel_model` maps the segments and builds the stack.
The records are NamedTuples: immutable like frozen dataclasses, and cheaper to define (a frozen
dataclass execs generated methods at import, paid by every start).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, NamedTuple

if TYPE_CHECKING:
    from loader.symbols import SymbolTable

# Our permission bits (not the ELF PF_* bits, whose X and R are swapped): the kernel model maps
# them onto page protections directly.
PERM_R, PERM_W, PERM_X = 1, 2, 4


class Segment(NamedTuple):
    """One PT_LOAD: `data` (len == filesz) goes at `vaddr`, the rest up to memsz is zero (bss)."""
    vaddr: int
    memsz: int
    filesz: int
    offset: int
    perms: int
    data: bytes


class LoadedImage(NamedTuple):
    """A validated executable, relocated to where it will live (static-pie already biased)."""
    path: str
    arch: str  # "i386" or "x86_64"
    bits: int
    entry: int
    segments: tuple[Segment, ...]  # sorted by vaddr, non-overlapping
    phdr_addr: int  # guest address of the program header table (AT_PHDR); 0 when not mapped, as Linux
    phent: int
    phnum: int
    interp: bytes | None   # PT_INTERP's path (ld.so) for a dynamic program, None when static
    is_pie: bool
    load_bias: int
    # Reads the symbol table on first use and keeps it (loader.elf_symbols.SymbolReader): a run
    # never needs symbols, a probe or a fault report does. Shared by images of the same file.
    symbol_reader: "Callable[[], SymbolTable]"
    # PT_GNU_STACK's word (program_headers.EXSTACK_*) and whether the program runs with
    # READ_IMPLIES_EXEC: the kernel sets the personality and the stack from them at exec.
    executable_stack: int = 0
    read_implies_exec: bool = False
    # PT_DYNAMIC's address, relocated (0: none, a static program): the dynamic table ld.so
    # relocates by, which loader/relocations.py reads back for a tool.
    dynamic: int = 0

    @property
    def symbols(self) -> "SymbolTable":
        return self.symbol_reader()

    @property
    def sections(self) -> dict[str, tuple[int, int]]:
        """name -> (address, size) of the allocated sections from the section headers (read
        with the symbols), {} where there are none."""
        return getattr(self.symbol_reader, "sections", {})

    @property
    def code_sections(self) -> dict[str, tuple[int, int]]:
        """The `sections` that hold instructions (SHF_EXECINSTR), {} where there are none."""
        names = getattr(self.symbol_reader, "code_sections", ())
        return {name: place for name, place in self.sections.items() if name in names}

    @property
    def symbols_problem(self) -> str | None:
        """Why `symbols` is empty although the file has a symbol table (one line), else None."""
        self.symbol_reader()
        return getattr(self.symbol_reader, "problem", None)

    @property
    def word_size(self) -> int:
        return self.bits // 8
