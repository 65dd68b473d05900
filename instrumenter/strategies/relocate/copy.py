"""The instrumented copy of a function (US 6,957,421 "instrumented code block").

`lay_out_copy(fc, at, arch, probes)` builds, for the function's reachable instructions
(blocks.py), in address order, one piece per instruction:

  [int3]            call-out: the probes' Python actions at this original address (kernel
                    mode data: the strategy's breakpoint handler runs them, then IP += 1)
  [native parts]    count / args:N actions run in the guest (native.py emit_part)
  [int3]            before a call only: the call is recorded for its return point
                    (returns.py), then IP += 1
  relocated insn    instrumenter/insn/relocate.py's recipe for the instruction at this
                    address; every exit whose target is an instruction of the function is
                    retargeted to that instruction's piece; a final jump to the next
                    instruction is dropped (the next piece follows)

then one "original continuation" per return point: the instruction at the return address
relocated on its own, jumping back to original code — where a callee's return would go on
when the function has no copy (every return goes into the copy once it is written:
strategy.py `_on_return`; a signal frame taken in a continuation resumes in one:
signals.py). A call in the copy pushes the ORIGINAL
return address (the relocator's call recipe, US 6,898,785), so the callee and everything that
reads the stack sees original addresses.

The layout depends only on where it is placed: lay it out once to learn its size, allocate,
lay it out at the slot (`same_size` says whether the second matches the first).
"""
import struct
from dataclasses import dataclass, field

from ...errors import InstrumenterError
from ...insn.emit import ABS_JUMP_LEN, REL_JUMP_LEN, rel32
from ...insn.relocate import relocate
from ..native import emit_part
from .blocks import FunctionCode
from .syscalls import is_system_call, relocate_system_call

INT3 = b"\xcc"


@dataclass(frozen=True)
class Piece:
    original: int                   # the original instruction's address
    start: int                      # the piece's first byte (its call-outs, parts)
    insn_start: int                 # where the relocated instruction begins
    end: int
    jump_back: int | None = None    # a final jump to the next original instruction, kept
    next_original: int = 0


@dataclass
class Copy:
    function: FunctionCode
    address: int
    code: bytearray = field(default_factory=bytearray)
    pieces: list[Piece] = field(default_factory=list)          # by address, then stubs
    by_original: dict[int, Piece] = field(default_factory=dict)
    stubs: dict[int, Piece] = field(default_factory=dict)      # return address -> continuation
    callouts: dict[int, tuple[str, int]] = field(default_factory=dict)   # int3 -> (kind, orig)
    entry_onward: int = 0           # where the entry breakpoint sends a thread (after its int3)

    @property
    def end(self) -> int:
        return self.address + len(self.code)

    @property
    def here(self) -> int:
        return self.address + len(self.code)

    def piece_at(self, address: int) -> Piece | None:
        for piece in self.pieces:          # (a binary search would do; copies are small)
            if piece.start <= address < piece.end:
                return piece
        return None

    def return_point(self, original_return: int) -> int:
        """Where a call's return continues in the copy: the piece of its return address."""
        return self.by_original[original_return].start


def lay_out_copy(fc: FunctionCode, at: int, arch: str, probes: dict) -> Copy:
    """`probes`: original address -> (has Python hooks, [NativeSlot]) of the function."""
    copy = Copy(fc, at)
    exits = []                                  # (offset of the exit, its original target)
    for n, insn in enumerate(fc.insns):
        start = copy.here
        python, natives = probes.get(insn.address, (False, ()))
        if python:
            copy.callouts[copy.here] = ("probe", insn.address)
            copy.code += INT3
        for slot in natives:
            copy.code += emit_part(slot, copy.here, None, arch)
        if insn.address == fc.start:
            copy.entry_onward = start + (1 if python else 0)
        if "call" in insn.groups and insn.next_address in fc.index:
            copy.callouts[copy.here] = ("call", insn.address)
            copy.code += INT3
        insn_start = copy.here
        relocated = relocate_system_call(insn, insn_start, arch) if is_system_call(insn) \
            else relocate(insn, insn_start, arch)
        code = bytearray(relocated.code)
        final = _final_jump(relocated)
        following = fc.insns[n + 1].address if n + 1 < len(fc.insns) else None
        jump_back = None
        if final is not None and insn.next_address == following:
            del code[final - insn_start:]       # the next piece follows: fall into it
        elif final is not None:
            jump_back = final
        for exit_ in relocated.exits:
            if exit_.address - insn_start < len(code) and fc.contains(exit_.target) \
                    and exit_.target in fc.index:
                exits.append((exit_.address - at, exit_.target))
        copy.code += code
        piece = Piece(insn.address, start, insn_start, copy.here, jump_back, insn.next_address)
        copy.pieces.append(piece)
        copy.by_original[insn.address] = piece
    for offset, target in exits:
        _aim(copy.code, offset, at, copy.by_original[target].start, arch)
    for call in fc.calls:
        _add_continuation(copy, fc.insns[fc.index[call.next_address]], arch)
    return copy


def _add_continuation(copy: Copy, insn, arch: str) -> None:
    """The instruction at a return address run on its own, back to original code after it:
    where a callee's return would go on with no copy to go into (module docstring)."""
    start = copy.here
    relocated = relocate_system_call(insn, start, arch) if is_system_call(insn) \
        else relocate(insn, start, arch)
    copy.code += relocated.code
    stub = Piece(insn.address, start, start, copy.here, _final_jump(relocated), insn.next_address)
    copy.pieces.append(stub)
    copy.stubs[insn.address] = stub


def _final_jump(relocated) -> int | None:
    """The address of the relocated code's last instruction when it is the jump back to the
    next original instruction."""
    end = relocated.address + len(relocated.code)
    for exit_ in relocated.exits:
        if exit_.kind == "fallthrough" and exit_.target == relocated.insn.next_address \
                and end - exit_.address in (REL_JUMP_LEN, ABS_JUMP_LEN):
            return exit_.address
    return None


def _aim(code: bytearray, offset: int, at: int, target: int, arch: str) -> None:
    """Re-aim the jump at `offset` (jmp rel32, jcc rel32, or jmp [rip+0] + address) to
    `target`, a piece of the copy (SDM Vol. 2A, JMP / Jcc encodings)."""
    if code[offset] == 0xE9:
        width = 5
    elif code[offset] == 0x0F and code[offset + 1] & 0xF0 == 0x80:
        width = 6
    elif code[offset:offset + 2] == b"\xff\x25":
        code[offset + 6:offset + 14] = struct.pack("<Q", target)
        return
    else:
        raise InstrumenterError(f"relocated exit at {at + offset:#x} is not a jump")
    rel = rel32(at + offset + width, target, arch)
    if rel is None:
        raise InstrumenterError(f"the copy at {at:#x} cannot reach {target:#x} with rel32")
    code[offset + width - 4:offset + width] = struct.pack("<i", rel)
