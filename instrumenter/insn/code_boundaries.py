"""Where instructions start in one mapped object's code: what a probe address must be.

x86 code cannot be decoded backwards: whether an address starts an instruction depends on where
decoding began. So an address is checked by a linear sweep from the nearest place known to
start an instruction at or before it (the anchors):
  * the start of the sized function symbol that contains it (and only that: the sweep of a
    function from its first byte is what objdump and gdb show for it);
  * otherwise the nearest of: a function symbol's start (sized or not: gcc's crti.o `_init`,
    musl's `_start` have size 0), a sized function's end (where its padding begins), an FDE's
    initial location (.eh_frame: the compiler emits one per function, from its first
    instruction), the ELF entry point, the start of the executable section (or, without
    section headers, of the executable PT_LOAD segment).
Anything else is refused, with the instruction starts on either side, as Linux refuses a uprobe
whose offset does not start an instruction (arch/x86/kernel/uprobes.c, arch_uprobe_analyze_insn
decodes the instruction at the offset and fails with -ENOEXEC where it is no instruction; the
placement patches an int3 over the first byte, which mid-instruction corrupts the one around
it). An address outside every executable section or segment of its object is no code at all.

The bytes come from the object's file image (its PT_LOAD data), never from the process: the
sweep sees the original code whatever is patched there, and one object's answers serve every
process that maps it at that place.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right

from loader.image import PERM_X

from ..errors import InstrumenterError
from .decode import instruction_starts


class NotAnInstruction(InstrumenterError):
    """A probe address where no instruction starts, or no code at all (one line)."""


class CodeBoundaries:
    """The instruction starts of one LoadedImage (relocated where it is mapped)."""

    def __init__(self, image):
        self.image = image
        self.arch = image.arch
        self.regions = _code_regions(image)               # (start, end, name), sorted
        self._region_starts = [start for start, _end, _name in self.regions]
        self._anchors: list[int] | None = None            # sorted, built on first need
        self._sweeps: dict[tuple[int, int], tuple[list[int], int]] = {}
        self._function_starts: list[int] | None = None

    # ---- the check ---------------------------------------------------------------------------
    def check(self, address: int, *, shift: int = 0) -> None:
        """Raise NotAnInstruction unless an instruction starts at `address`. Addresses in the
        message are shown minus `shift` (an object's load bias: as objdump shows the file)."""
        region = self.region_at(address)
        if region is None:
            raise NotAnInstruction(f"no code at {address - shift:#x} ({self._where(address)})")
        starts, end = self._sweep_around(address, region)
        i = bisect_left(starts, address)
        if i < len(starts) and starts[i] == address:
            return
        if address >= end:           # the sweep stopped at bytes that decode as nothing
            raise NotAnInstruction(
                f"no instruction decodes at {end - shift:#x} ({self._bytes(end)}), "
                f"before {address - shift:#x}")
        before = starts[i - 1]
        after = starts[i] if i < len(starts) else end
        raise NotAnInstruction(f"not an instruction boundary (nearest: "
                               f"{self._shown(before, shift)}, {self._shown(after, shift)})")

    def region_at(self, address: int) -> tuple[int, int, str] | None:
        """The executable section (or segment) holding `address`: (start, end, name)."""
        i = bisect_right(self._region_starts, address) - 1
        if i >= 0 and address < self.regions[i][1]:
            return self.regions[i]
        return None

    def extent(self, symbol) -> int:
        """Where the code a symbol of size 0 names can end: the next function symbol's start
        or the end of its section, whichever comes first (its offsets must stay below)."""
        region = self.region_at(symbol.addr)
        end = region[1] if region is not None else symbol.addr
        self._symbol_before(symbol.addr)                # (fills the starts)
        starts = self._function_starts
        i = bisect_right(starts, symbol.addr)
        return min(end, starts[i]) if i < len(starts) else end

    # ---- sweeps ------------------------------------------------------------------------------
    def _sweep_around(self, address: int, region) -> tuple[list[int], int]:
        start, end, _name = region
        function = self.image.symbols.function_at(address)
        if function is not None and start <= function.addr:
            return self._sweep(function.addr, min(function.addr + function.size, end))
        anchors = self.anchors()
        i = bisect_right(anchors, address)
        anchor = max(anchors[i - 1] if i else start, start)
        stop = min(anchors[i] if i < len(anchors) else end, end)
        return self._sweep(anchor, stop)

    def _sweep(self, start: int, stop: int) -> tuple[list[int], int]:
        key = (start, stop)
        found = self._sweeps.get(key)
        if found is None:
            found = self._sweeps[key] = instruction_starts(self._read(start, stop - start),
                                                           start, self.arch)
        return found

    def anchors(self) -> list[int]:
        """Every address known to start an instruction without decoding (module docstring)."""
        if self._anchors is None:
            known = set(self._region_starts)
            for symbol in self.image.symbols.functions():
                known.add(symbol.addr)
                if symbol.size:
                    known.add(symbol.addr + symbol.size)
            known.update(_fde_starts(self.image))
            known.add(self.image.entry)
            self._anchors = sorted(a for a in known if self.region_at(a) is not None)
        return self._anchors

    # ---- words for the messages --------------------------------------------------------------
    def _shown(self, address: int, shift: int) -> str:
        """"0x401004 <_init+4>", as gdb's x/i names an address (the nearest function symbol
        at or before it in its section, decimal offset); the bare address where none does."""
        name = self._name(address)
        return f"{address - shift:#x} <{name}>" if name else f"{address - shift:#x}"

    def _name(self, address: int) -> str | None:
        function = self.image.symbols.function_at(address)
        if function is None:
            function = self._symbol_before(address)
            region = self.region_at(address)
            if function is None or region is None or function.addr < region[0]:
                return None
            if function.size and address >= function.addr + function.size:
                return None                             # past a sized function: not its code
        offset = address - function.addr
        return f"{function.name}+{offset}" if offset else function.name

    def _symbol_before(self, address: int):
        """The function symbol starting nearest at or before `address` (of aliases at one
        address, the first given: the name the symbol table prefers)."""
        functions = self.image.symbols.functions()
        if self._function_starts is None:
            self._function_starts = [s.addr for s in functions]
        starts = self._function_starts
        i = bisect_right(starts, address) - 1
        return functions[bisect_left(starts, starts[i])] if i >= 0 else None

    def _where(self, address: int) -> str:
        name = self.image.path.rsplit("/", 1)[-1]
        for section, (start, size) in self.image.sections.items():
            if start <= address < start + size:
                return f"in {section}, which holds no instructions"
        if any(s.vaddr <= address < s.vaddr + s.memsz for s in self.image.segments if s.perms & PERM_X):
            return f"in no section of {name} that holds instructions"
        return f"outside every executable segment of {name}"

    def holds(self, address: int) -> bool:
        """Whether `address` is in the object's span, from its first segment to its last
        (where no other object can be): the only addresses this finder can judge."""
        segments = self.image.segments
        return bool(segments) and segments[0].vaddr <= address < max(s.vaddr + s.memsz for s in segments)

    def _bytes(self, address: int) -> str:
        region = self.region_at(address)
        if region is None:
            return "no bytes"
        return self._read(address, min(8, region[1] - address)).hex(" ") or "no bytes"

    def _read(self, address: int, size: int) -> bytes:
        """The object's bytes from its file (zeros past a segment's file size, as mapped)."""
        for segment in self.image.segments:
            if segment.vaddr <= address < segment.vaddr + segment.memsz:
                offset = address - segment.vaddr
                data = bytes(segment.data[offset:offset + size])
                return data + bytes(min(size, segment.vaddr + segment.memsz - address) - len(data))
        return b""


def _code_regions(image) -> list[tuple[int, int, str]]:
    """The executable sections; without section headers, the executable PT_LOAD segments."""
    sections = image.code_sections
    if sections:
        return sorted((start, start + size, name) for name, (start, size) in sections.items())
    return sorted((s.vaddr, s.vaddr + s.memsz, "segment") for s in image.segments if s.perms & PERM_X)


def _fde_starts(image) -> list[int]:
    from loader.cfi import CallFrameTable
    try:
        return CallFrameTable(image).fde_starts()
    except Exception:            # noqa: BLE001 -- damaged CFI only loses its anchors (cfi.py reads lazily)
        return []


_FINDERS: dict[tuple, CodeBoundaries] = {}


def boundaries_of(image) -> CodeBoundaries:
    """The finder of `image`, kept while the run maps that object at that place (keyed as the
    unwinder keys its CFI tables: profiler/unwind.py table_for)."""
    key = (image.path, image.load_bias, image.bits, image.entry)
    finder = _FINDERS.get(key)
    if finder is None:
        if len(_FINDERS) >= 256:
            _FINDERS.clear()
        finder = _FINDERS[key] = CodeBoundaries(image)
    return finder
