"""Hand-encoded x86 glue for relocated instructions: jumps back, return-address pushes.

The encodings are spelled out (Intel SDM Vol. 2) rather than assembled so that the length of
every piece is known before it is placed: a conditional branch must know how far to skip. None
of the glue touches EFLAGS — `lea` instead of `add`/`sub` on the stack pointer, `mov` for
stores — because the relocated instruction's flags must reach the original code unchanged.
"""
import struct
from dataclasses import dataclass

_MASK = {"i386": 0xFFFF_FFFF, "x86_64": 0xFFFF_FFFF_FFFF_FFFF}
ABS_JUMP_LEN = 14            # jmp [rip+0] + 8-byte address
REL_JUMP_LEN = 5             # jmp rel32
RED_ZONE = 128               # x86-64 psABI 3.2.2: leaf functions may use 128 bytes below rsp
LEGACY_REGS = ("rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi")
REG_NUMBERS = {r: n for n, r in enumerate(LEGACY_REGS + tuple(f"r{i}" for i in range(8, 16)))}


def fits_int32(value: int) -> bool:
    return -0x8000_0000 <= value <= 0x7FFF_FFFF


def rel32(source_end: int, target: int, arch: str) -> int | None:
    """The rel32 reaching `target` from an instruction ending at `source_end`, or None.

    On i386 the IP wraps modulo 2^32 (SDM Vol. 2A, JMP), so every target is reachable.
    """
    delta = target - source_end
    if arch == "i386":
        delta = (delta + 0x8000_0000) % 0x1_0000_0000 - 0x8000_0000
    return delta if fits_int32(delta) else None


@dataclass(frozen=True)
class ExitPoint:
    """An instruction of the relocated code that transfers control back to original code."""
    address: int     # where that instruction sits (inside the relocated code)
    target: int      # the original-code address it goes to
    kind: str        # "fallthrough", "taken" (branch target), "call" (callee entry) or
                     # "task-scratch-restore" (an int3 whose kernel handler resumes at target)


class Emitter:
    """Accumulates relocated code placed at `address`, recording its exits."""

    def __init__(self, address: int, arch: str):
        self.address, self.arch = address, arch
        self.code = bytearray()
        self.exits: list[ExitPoint] = []

    @property
    def here(self) -> int:
        return (self.address + len(self.code)) & _MASK[self.arch]

    def raw(self, data: bytes) -> None:
        self.code += data

    def jump_len(self, target: int, at: int | None = None) -> int:
        """Length of the jump `jump()` would emit at `at` (default: here)."""
        at = self.here if at is None else at
        return REL_JUMP_LEN if rel32(at + REL_JUMP_LEN, target, self.arch) is not None \
            else ABS_JUMP_LEN

    def jump(self, target: int, kind: str) -> None:
        """jmp rel32, or on x86-64 beyond ±2 GiB `jmp [rip+0]` followed by the address."""
        self.exits.append(ExitPoint(self.here, target, kind))
        rel = rel32(self.here + REL_JUMP_LEN, target, self.arch)
        if rel is not None:
            self.code += b"\xe9" + struct.pack("<i", rel)
        else:
            self.code += b"\xff\x25\x00\x00\x00\x00" + struct.pack("<Q", target)

    def jcc_rel32(self, cc: int, target: int) -> bool:
        """jcc rel32 to target when it reaches (always on i386); False when it does not."""
        rel = rel32(self.here + 6, target, self.arch)
        if rel is None:
            return False
        self.exits.append(ExitPoint(self.here, target, "taken"))
        self.code += bytes((0x0F, 0x80 | cc)) + struct.pack("<i", rel)
        return True

    # ---- stack glue --------------------------------------------------------------------------
    def lea_sp(self, delta: int) -> None:
        """sp += delta without touching EFLAGS."""
        rex = b"\x48" if self.arch == "x86_64" else b""
        if -128 <= delta <= 127:
            self.code += rex + b"\x8d\x64\x24" + struct.pack("<b", delta)
        else:
            self.code += rex + b"\x8d\xa4\x24" + struct.pack("<i", delta)

    def push_word(self, value: int) -> None:
        """Push a full word holding `value` (a return address) without touching EFLAGS."""
        if self.arch == "i386" or fits_int32(_signed64(value)):
            # push imm32 sign-extends to 64 bits in 64-bit mode (SDM Vol. 2B, PUSH).
            self.code += b"\x68" + struct.pack("<I", value & 0xFFFF_FFFF)
            return
        self.lea_sp(-8)
        self.store_word_at_sp(0, value)

    def store_word_at_sp(self, offset: int, value: int) -> None:
        """mov word [sp + offset], value (one imm32 store, or two on x86-64 when needed)."""
        if self.arch == "i386":
            self._store_dword_at_sp(offset, value)
        elif fits_int32(_signed64(value)):
            self.code += b"\x48" + _sp_modrm(0xC7, 0, offset) + struct.pack("<i", _signed64(value))
        else:
            self._store_dword_at_sp(offset, value & 0xFFFF_FFFF)
            self._store_dword_at_sp(offset + 4, value >> 32)

    def _store_dword_at_sp(self, offset: int, value: int) -> None:
        self.code += _sp_modrm(0xC7, 0, offset) + struct.pack("<I", value & 0xFFFF_FFFF)

    def push_at_sp(self) -> None:
        self.code += b"\xff\x34\x24"                    # push word [sp]

    def ret(self, pop_extra: int = 0) -> None:
        self.code += b"\xc2" + struct.pack("<H", pop_extra) if pop_extra else b"\xc3"

    # ---- scratch-register glue (x86-64) ------------------------------------------------------
    def push_reg(self, reg: str) -> None:
        n = REG_NUMBERS[reg]
        self.code += (b"\x41" if n >= 8 else b"") + bytes((0x50 + (n & 7),))

    def pop_reg(self, reg: str) -> None:
        n = REG_NUMBERS[reg]
        self.code += (b"\x41" if n >= 8 else b"") + bytes((0x58 + (n & 7),))

    def mov_reg_imm64(self, reg: str, value: int) -> None:
        n = REG_NUMBERS[reg]
        self.code += bytes((0x48 | (n >> 3), 0xB8 + (n & 7))) + struct.pack("<Q", value)

    def load_reg_from_sp(self, reg: str, offset: int) -> None:
        """mov reg, qword [rsp + offset]"""
        n = REG_NUMBERS[reg]
        self.code += bytes((0x48 | ((n >> 3) << 2),)) + _sp_modrm(0x8B, n & 7, offset)


def _sp_modrm(opcode: int, reg_field: int, offset: int) -> bytes:
    """opcode + ModRM/SIB addressing [sp + offset] (SIB 0x24: base sp, no index)."""
    if offset == 0:
        return bytes((opcode, (reg_field << 3) | 0x04, 0x24))
    return bytes((opcode, 0x40 | (reg_field << 3) | 0x04, 0x24)) + struct.pack("<b", offset)


def _signed64(value: int) -> int:
    value &= 0xFFFF_FFFF_FFFF_FFFF
    return value - (1 << 64) if value >> 63 else value
