"""Disassembly of generated code for failure reports: one line per instruction, with the
data of an absolute jump (`jmp [rip+0]` followed by its 8-byte target) shown as data."""
from __future__ import annotations

from instrumenter.errors import DecodeError
from instrumenter.insn.decode import decode

_ABS_JUMP = bytes.fromhex("ff2500000000")


def listing(code: bytes, address: int, arch: str) -> list[str]:
    lines, offset = [], 0
    while offset < len(code):
        at = address + offset
        try:
            insn = decode(code[offset:offset + 15], at, arch)
        except DecodeError:
            lines.append(f"{at:#x}: .byte {code[offset]:#04x}")
            offset += 1
            continue
        lines.append(f"{at:#x}: {insn.raw.hex(' '):<24} {insn.mnemonic} {insn.op_str}".rstrip())
        offset += insn.length
        if insn.raw == _ABS_JUMP and offset + 8 <= len(code):
            target = int.from_bytes(code[offset:offset + 8], "little")
            lines.append(f"{address + offset:#x}: .quad {target:#x}")
            offset += 8
    return lines
