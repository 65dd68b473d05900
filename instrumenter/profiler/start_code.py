"""Where a stripped program's `main` is: the first argument its `_start` hands the C library.

The walk-up stops at `main` (US 7,823,129: up to the top of the chain), which a stripped program
does not name. glibc's start code says where it is, as gdb and radare2 find a stripped main:
`_start` (glibc sysdeps/x86_64/start.S, sysdeps/i386/start.S) calls __libc_start_main with
main as its first argument —
  x86-64: `lea main(%rip), %rdi` (PIE) or `mov $main, %rdi`, then the call;
  i386:   the arguments pushed right to left, main last: `push main@GOT(%ebx)` after
          `call __x86.get_pc_thunk.bx; add $_GLOBAL_OFFSET_TABLE_, %ebx` (PIE, the GOT slot
          read once ld.so has relocated it), or `push $main`.
Anything else (musl's `_start` calls `_start_c`, a hand-written start) gives None: nothing is
guessed.
"""
from __future__ import annotations

from kernel_model.debug import MemoryFault

from ..errors import DecodeError
from ..insn.decode import decode

START_BYTES = 96            # glibc's _start is ~40 bytes on both arches
PIC_THUNK_EBX = b"\x8b\x1c\x24\xc3"     # mov (%esp),%ebx; ret


def main_of(door, process) -> int | None:
    """The address of `process`'s main as its `_start` passes it, or None."""
    image = getattr(process, "image", None)
    if image is None:
        return None
    arch = door.arch(process).name
    try:
        code = door.read_memory(process, image.entry, START_BYTES)
    except MemoryFault:
        return None
    insns = _until_call(code, image.entry, arch, door, process)
    if insns is None:
        return None
    if arch == "x86_64":
        return _main_x86_64(insns)
    return _main_i386(insns, door, process)


def _until_call(code: bytes, address: int, arch: str, door, process):
    """The instructions from `address` up to the call into the C library (a call to a PIC
    thunk on the way is kept and passed): None when there is none in reach."""
    insns, at = [], 0
    while at < len(code):
        try:
            insn = decode(code[at:], address + at, arch)
        except DecodeError:
            return None
        insns.append(insn)
        at += insn.length
        if "call" in insn.groups and not _calls_thunk(insn, door, process):
            return insns
        if "ret" in insn.groups or insn.base_mnemonic == "hlt":
            return None
    return None


def _calls_thunk(insn, door, process) -> bool:
    if insn.arch != "i386" or insn.branch_target is None:
        return False
    try:
        return door.read_memory(process, insn.branch_target, len(PIC_THUNK_EBX)) == PIC_THUNK_EBX
    except MemoryFault:
        return False


def _main_x86_64(insns) -> int | None:
    """The value %rdi was last given before the call."""
    for insn in reversed(insns[:-1]):
        if "rdi" not in insn.regs_written:
            continue
        if insn.base_mnemonic == "lea" and insn.rip_relative:
            return insn.rip_target
        if insn.base_mnemonic == "mov" and insn.operands[1].kind == "imm":
            return insn.operands[1].imm
        return None
    return None


def _main_i386(insns, door, process) -> int | None:
    """The last word pushed before the call, with %ebx followed through the PIC thunk."""
    ebx = None
    for insn in insns[:-1]:
        if "call" in insn.groups:
            ebx = insn.next_address                      # the thunk's mov (%esp),%ebx
        elif insn.base_mnemonic == "add" and ebx is not None and insn.operands[0].reg == "ebx" \
                and insn.operands[1].kind == "imm":
            ebx = (ebx + insn.operands[1].imm) & 0xFFFF_FFFF
    push = insns[-2] if len(insns) >= 2 and insns[-2].base_mnemonic == "push" else None
    if push is None:
        return None
    operand = push.operands[0]
    if operand.kind == "imm":
        return operand.imm & 0xFFFF_FFFF
    mem = operand.mem
    if operand.kind != "mem" or mem.base != "ebx" or mem.index is not None or ebx is None:
        return None
    try:
        slot = door.read_memory(process, (ebx + mem.disp) & 0xFFFF_FFFF, 4)
    except MemoryFault:
        return None
    return int.from_bytes(slot, "little")
