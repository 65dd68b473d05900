"""Tool address -> original address (US 6,957,421: debugging instrumented code).

A thread of a probed program is sometimes inside the tool's code: an XOL slot holding the
relocated copy of a probed instruction (trampoline strategy), a jump site's trampoline (its
parts, then the relocated covered instructions), later a relocated function. A debugger shows
the ORIGINAL address instead, and steps until a thread is back at a point that corresponds to
one.

`ToolAddressMap.lookup(process, address)` answers with a `ToolLocation`:
  original   the original address the thread is "at": the original instruction that has not
             run yet (the copy's first byte, a part before it) or, after the copy ran, the next
             original instruction (the jump back);
  exact      the registers there are exactly the program's at `original` (nothing of the tool
             is on the stack, no relocated instruction half done): a place a stop may be
             reported at and resumed from;
  after      an exact point that is a jump back to original code (a step goes through it);
or None when `address` is not tool code. Each strategy answers through a source object with
`lookup(process, address) -> ToolLocation | None`; a relocation table (the `relocate`
strategy's original <-> relocated map) plugs in the same way with `add_source`.
"""
from dataclasses import dataclass

from ..insn.decode import decode
from ..insn.emit import REL_JUMP_LEN
from ..insn.relocate import relocate

TOOL_AREA = b"[uprobes]"          # the XOL pages' name in /proc/PID/maps (xol.py)
MAX_INSN = 15


@dataclass(frozen=True)
class ToolLocation:
    original: int
    exact: bool
    after: bool = False      # a jump back: the original instruction ran, only the jump is left


class ToolAddressMap:
    def __init__(self, debug, session=None):
        self.debug = debug
        self.sources: list = []
        if session is not None:
            self.sources.append(TrampolineSlots(session))
            self.sources.append(JumpTrampolines(session))
            for strategy in session.strategies.values():     # base.py address_source
                source = strategy.address_source()
                if source is not None:
                    self.sources.append(source)

    def add_source(self, source) -> None:
        if source is not None:              # a strategy's address_source() may have none
            self.sources.append(source)

    def lookup(self, process, address: int) -> ToolLocation | None:
        for source in self.sources:
            location = source.lookup(process, address)
            if location is not None:
                return location
        if self.is_tool_code(process, address):
            return ToolLocation(address, False)      # tool code no source knows: shown as is
        return None

    def copies_of(self, process, original: int) -> list[int]:
        """The tool addresses where the instruction at `original` runs instead of there (a
        jump probe's covered instructions run in its trampoline's body): exact points that
        stand for it, where a debugger breakpoint on `original` must stop too. Sources that
        can answer have `copies_of(process, original)`."""
        copies = []
        for source in self.sources:
            answer = getattr(source, "copies_of", None)
            if answer is not None:
                copies += answer(process, original)
        return sorted(set(copies))

    def is_tool_code(self, process, address: int) -> bool:
        area = self.debug.area_at(process, address)
        return area is not None and area.name == TOOL_AREA

    def original_pc(self, process, address: int) -> int:
        location = self.lookup(process, address)
        return address if location is None else location.original


class _RelocatedCopies:
    """Relocated copies decoded once: (space, original address, copy address) -> Relocated."""

    def __init__(self, session):
        self.session = session
        self._cache: dict = {}

    def relocated(self, process, original: int, at: int):
        key = (process.space.serial, original, at)
        piece = self._cache.get(key)
        if piece is None:
            arch = self.session.debug.arch(process).name
            code = self.session.debug.read_memory(process, original, MAX_INSN)   # under patches
            piece = self._cache[key] = relocate(decode(code, original, arch), at, arch,
                                                task_scratch=True)   # as trampoline.py lays it
        return piece


def _in_copy(piece, address: int) -> ToolLocation | None:
    """Where `address` inside the relocated copy `piece` stands."""
    if address == piece.address:
        return ToolLocation(piece.insn.address, True)            # the copy has not run yet
    for exit_ in piece.exits:
        if exit_.address == address and exit_.kind == "fallthrough":
            return ToolLocation(piece.insn.next_address, True, after=True)   # it ran: the jump back
    if piece.address < address < piece.address + piece.length:
        return ToolLocation(piece.insn.address, False)           # half-way through a recipe
    return None


class TrampolineSlots:
    """The trampoline strategy's XOL slots: one relocated copy of the probed instruction,
    then a jump back (instrumenter/strategies/trampoline.py)."""

    def __init__(self, session):
        self.session = session
        self.copies = _RelocatedCopies(session)

    def lookup(self, process, address: int) -> ToolLocation | None:
        trampolines = self.session.trampolines
        serial = process.space.serial
        for (space_id, original), site in trampolines.sites.items():
            if space_id == serial and site.trampoline <= address < site.trampoline + 64:
                return _in_copy(self.copies.relocated(process, original, site.trampoline), address)
        return None


class JumpTrampolines:
    """The jump strategy's trampolines (instrumenter/strategies/jump.py): hook parts, then
    the covered instructions relocated one after another, then the jump back. Before the
    covered copies everything stands for the site's first instruction; only the start of a
    part that is a lone int3 (Python hooks) is exact, a native part pushes and pops."""

    def __init__(self, session):
        self.session = session
        self.copies = _RelocatedCopies(session)

    def lookup(self, process, address: int) -> ToolLocation | None:
        jumps = self.session.jumps
        serial = process.space.serial
        for (space_id, part), site in jumps.parts.items():
            if space_id == serial and address == part:
                return ToolLocation(site.address, True)
        for (space_id, original), site in jumps.sites.items():
            if space_id != serial:
                continue
            if site.body <= address < site.body + 256:
                return self._in_body(process, site, address)
            if site.entry <= address < site.entry + 160:
                return ToolLocation(site.address, False)
        return None

    def copies_of(self, process, original: int) -> list[int]:
        """The copy in a body of a covered instruction at `original` (not a site's first: that
        one is stopped at before the jump runs)."""
        serial = process.space.serial
        return [at for (space_id, _), site in self.session.jumps.sites.items()
                if space_id == serial and site.address < original < site.end
                for at, address in self._pieces(process, site) if address == original]

    def _pieces(self, process, site):
        """(copy address, original address) of each covered instruction, in the body."""
        at, original = site.body, site.address
        while original < site.end:
            piece = self.copies.relocated(process, original, at)
            yield at, original
            at += self._length(piece, site)
            original = piece.insn.next_address

    @staticmethod
    def _length(piece, site) -> int:
        """A piece's bytes in the body: its final jump back dropped unless it is the last."""
        length = piece.length
        final = piece.address + length - REL_JUMP_LEN
        if piece.insn.next_address < site.end and piece.code[-REL_JUMP_LEN] == 0xE9 \
                and any(e.kind == "fallthrough" and e.address == final for e in piece.exits):
            length -= REL_JUMP_LEN
        return length

    def _in_body(self, process, site, address: int) -> ToolLocation | None:
        """The covered copies, laid out as relocate_covered lays them: each piece falls
        through into the next (its final jump back dropped), the last one jumps back."""
        at, original = site.body, site.address
        while original < site.end:
            piece = self.copies.relocated(process, original, at)
            last = piece.insn.next_address >= site.end
            length = self._length(piece, site)
            if address == at:
                return ToolLocation(original, True)
            if at < address < at + length:
                if last:
                    return _in_copy(piece, address) or ToolLocation(original, False)
                return ToolLocation(original, False)
            at += length
            original = piece.insn.next_address
        return ToolLocation(site.end, True, after=True) if address == at else None

