"""The memory an instruction may write, for a step-through (steps.py): what the step changed
in the stack and in memory, besides the registers.

The words are found from the instruction and the registers at its step, before it runs:
  - its memory operands that it writes (capstone's access flags, CS_AC_WRITE), at
    base + index * scale + displacement (RIP-relative: from the next instruction's address,
    Intel SDM vol. 2 2.2.1.6); an operand through FS or GS (a thread's TLS) is left out: its
    base is not in the registers read;
  - the word below the stack pointer, where a push, a call (its return address) or an
    emulated push (in-trap emulation writes it from the trap handler, so the int3's step
    shows it) stores.
Nothing is decoded that does not decode: no words.
"""
from __future__ import annotations

import capstone
from capstone import x86 as cx

_CS = {}


def _disassembler(arch: str):
    if arch not in _CS:
        cs = capstone.Cs(capstone.CS_ARCH_X86,
                         capstone.CS_MODE_32 if arch == "i386" else capstone.CS_MODE_64)
        cs.detail = True
        _CS[arch] = cs
    return _CS[arch]


def written_words(code: bytes, address: int, arch: str, registers: dict) -> list[tuple[int, int]]:
    """[(address, size)] the instruction at `address` may write, given its `registers`."""
    word = 4 if arch == "i386" else 8
    mask = (1 << (8 * word)) - 1
    sp = registers["esp" if arch == "i386" else "rsp"]
    out = [((sp - word) & mask, word)]
    insn = next(_disassembler(arch).disasm(code, address, 1), None)
    if insn is None:
        return out
    for op in insn.operands:
        if op.type != cx.X86_OP_MEM or not op.access & capstone.CS_AC_WRITE or op.mem.segment:
            continue
        target = _effective(insn, op.mem, registers)
        if target is not None and (target & mask, op.size) not in out:
            out.append((target & mask, op.size))
    return out


def _effective(insn, mem, registers: dict) -> int | None:
    total = mem.disp
    for reg, scale in ((mem.base, 1), (mem.index, mem.scale)):
        if not reg:
            continue
        name = insn.reg_name(reg)
        if name in ("rip", "eip"):
            total += insn.address + insn.size
        elif name in registers:
            total += registers[name] * scale
        else:
            return None                     # a part register (r15d...): not read here
    return total
