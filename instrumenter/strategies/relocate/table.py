"""One relocation table per address space, both ways (US 6,957,421: the relocation
information the debugger, the detacher, fault reports and symbolization share).

  original_of(address) -> (original, exact)   an address inside a relocated copy -> the
        original instruction it stands for; `exact`: the registers there are the program's
        at that original address (the start of a piece, before its call-outs and parts, or
        where the relocated instruction begins), so a stop may be shown and resumed there;
        inside a native part or half-way through a recipe it is not;
  relocated_of(original) -> address | None    where the CURRENT copy of the function runs
        that original instruction (its piece: call-outs first).

Copies a function had before (a probe added later rebuilds it) stay in the table until they
are freed: a thread may still run in one (strategy.py frees them when no thread's PC is there).
`RelocationSource` answers ToolAddressMap (instrumenter/debugger/addrmap.py) from the tables
of the session's relocate strategy.
"""
from dataclasses import dataclass, field

from .copy import Copy


@dataclass
class SpaceRelocations:
    current: dict[int, Copy] = field(default_factory=dict)    # function start -> its copy
    copies: list[Copy] = field(default_factory=list)          # every copy still mapped

    def forked(self) -> "SpaceRelocations":
        """A fork child's memory holds the same copies at the same addresses."""
        return SpaceRelocations(dict(self.current), list(self.copies))

    def add(self, copy: Copy) -> None:
        self.current[copy.function.start] = copy
        self.copies.append(copy)

    def retire(self, function_start: int) -> Copy | None:
        return self.current.pop(function_start, None)

    def drop(self, copy: Copy) -> None:
        self.copies = [c for c in self.copies if c is not copy]

    def copy_at(self, address: int) -> Copy | None:
        for copy in self.copies:
            if copy.address <= address < copy.end:
                return copy
        return None

    def original_of(self, address: int) -> tuple[int, bool] | None:
        location = self.locate(address)
        return None if location is None else location[:2]

    def locate(self, address: int) -> tuple[int, bool, bool] | None:
        """(original, exact, after) for an address in a copy, or None (not in one): `after`
        is a kept jump back to original code, the instruction before it done."""
        copy = self.copy_at(address)
        piece = copy.piece_at(address) if copy is not None else None
        if piece is None:
            return None
        if address == piece.jump_back:
            return piece.next_original, True, True
        exact = address in (piece.start, piece.insn_start) or \
            copy.callouts.get(address, ("", 0))[0] == "call"
        return piece.original, exact, False

    def relocated_of(self, original: int) -> int | None:
        for copy in self.current.values():
            piece = copy.by_original.get(original)
            if piece is not None:
                return piece.start
        return None


class RelocationSource:
    """ToolAddressMap's source for relocated functions (addrmap.py's contract)."""

    def __init__(self, strategy):
        self.strategy = strategy

    def lookup(self, process, address: int):
        from ...debugger.addrmap import ToolLocation      # the debugger imports strategies
        table = self.strategy.tables_of(process)
        location = table.locate(address) if table is not None else None
        if location is None:
            return None
        original, exact, after = location
        return ToolLocation(original, exact, after)
