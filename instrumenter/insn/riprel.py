"""Re-targeting a [rip + disp32] operand for a copy of the instruction placed elsewhere.

Two ways, as in uprobes (arch/x86/kernel/uprobes.c, `riprel_analyze`):
  * the absolute address is still within ±2 GiB of the copy: rewrite disp32 in place;
  * it is not: address through a scratch register instead. ModRM mod=00 rm=101 ([rip+disp32])
    becomes mod=10 rm=scratch ([scratch+disp32], disp32 = 0) — the same length — and REX.B
    (or VEX's inverted B) is set to select the scratch register. The caller loads the
    absolute address into the scratch register first and restores it afterwards.
The scratch register must be one the instruction does not touch, explicitly or implicitly
(decode gives capstone's implicit uses: mul/div rdx:rax, shifts cl, cmpxchg rax,
cmpxchg16b rdx:rax:rcx:rbx, string instructions rsi/rdi/rcx...). Legacy registers come first:
using r8-r15 needs a REX prefix, and adding one to an instruction without it would turn
ah/bh/ch/dh into spl/bpl/sil/dil (SDM Vol. 2A, 2.2.1).
"""
import struct

from .decode import Insn, decode
from .emit import REG_NUMBERS, fits_int32
from ..errors import InstrumenterError, RelocationRefused

# rsp is never a scratch (the instruction's stack must stay where it is); r12 would need a SIB
# byte (rm=100), which would change the instruction's length.
_LEGACY_SCRATCH = ("rbx", "rsi", "rdi", "rbp", "rdx", "rcx", "rax")
_EXTENDED_SCRATCH = ("r11", "r10", "r9", "r8", "r13", "r14", "r15")


def displacement_for(insn: Insn, new_insn_address: int, length: int | None = None) -> int | None:
    """disp32 making the copy at new_insn_address refer to the original absolute address."""
    length = insn.length if length is None else length
    disp = insn.rip_target - (new_insn_address + length)
    return disp if fits_int32(disp) else None


def with_displacement(raw: bytes, insn: Insn, disp: int) -> bytes:
    """`raw` (laid out like insn.raw) with its disp32 replaced."""
    out = bytearray(raw)
    out[insn.disp_offset:insn.disp_offset + 4] = struct.pack("<i", disp)
    return bytes(out)


def choose_scratch(insn: Insn) -> str:
    """A register the instruction neither reads nor writes, usable without changing its length."""
    if insn.vex == 4:
        raise RelocationRefused(f"{insn}: EVEX-encoded RIP-relative instruction beyond ±2 GiB "
                                "of the XOL page (no scratch-register rewrite for EVEX)",
                                ("singlestep",))
    candidates = _LEGACY_SCRATCH
    if insn.rex or insn.vex == 3:        # REX.B / VEX.B can select r8-r15 without a new byte
        candidates = candidates + _EXTENDED_SCRATCH
    for reg in candidates:
        if not insn.uses(reg):
            return reg
    raise RelocationRefused(f"{insn}: no free scratch register for the RIP-relative operand",
                            ("singlestep",))


def through_scratch(raw: bytes, insn: Insn, scratch: str, arch: str = "x86_64") -> bytes:
    """`raw` (laid out like insn.raw) addressing [scratch + 0] instead of [rip + disp32]."""
    n = REG_NUMBERS[scratch]
    out = bytearray(raw)
    modrm = out[insn.modrm_offset]
    out[insn.modrm_offset] = 0x80 | (modrm & 0x38) | (n & 7)          # mod=10: [reg + disp32]
    out[insn.disp_offset:insn.disp_offset + 4] = b"\0\0\0\0"
    if insn.rex:
        rex_at = insn.opcode_offset - 1
        out[rex_at] = (out[rex_at] & ~1) | (n >> 3)
    elif insn.vex == 3:
        b_inverted = 0 if n >> 3 else 0x20                              # VEX.B is stored inverted
        out[insn.opcode_offset + 1] = (out[insn.opcode_offset + 1] & ~0x20) | b_inverted
    elif n >= 8:
        raise InstrumenterError(f"{insn}: scratch {scratch} needs a REX prefix it does not have")
    result = bytes(out)
    _check_rewrite(result, insn, scratch, arch)
    return result


def _check_rewrite(code: bytes, insn: Insn, scratch: str, arch: str) -> None:
    """The rewritten bytes must decode to the same instruction, over [scratch]: a wrong byte
    here would silently run a different instruction in the guest."""
    got = decode(code, 0, arch)
    mem = got.memory_operand
    if got.length != len(code) or mem is None or mem.base != scratch or mem.disp != 0:
        raise InstrumenterError(f"{insn}: scratch rewrite decoded as {got} — refusing to emit it")
