"""Functions that use their own return address, found by their code: an exit hook must leave them
alone.

An exit hook swaps the return address at entry for the return landing (uretprobes.py). A function
that reads that word itself then holds the landing: setjmp saves it in the jmp_buf and returns a
second time through it after its frame is gone; getcontext/swapcontext save it as the context's
PC; vfork pops it before the syscall, and the child and the parent both return through it; the
i386 PIC thunk returns it as the GOT base; code that asks `__builtin_return_address(0)` (dlopen
naming its caller's namespace) gets the tool's page. Linux's uretprobes break the same way;
full instrumentation (full.py) leaves such functions out.

By name where there are names (full.NOT_CALLED); in stripped code, where there are none
(Debian's bash-static: its libc's setjmp and vfork are FDEs like any function), by looking at
the code: from the entry, along the fall-through path and through direct jumps (`_setjmp` is
`xor %esi,%esi; jmp __sigsetjmp`), within the function's bounds, the stack pointer's distance from the return address slot is
followed through push, pop, `sub`/`add` of a constant and calls (which return with it as it
was); an instruction that reads the slot — a memory operand [sp + that distance], or a `pop`
when nothing is pushed — uses the return address. The look stops at a return, an indirect
jump, a write of sp it cannot follow, or after MAX_INSNS instructions: a function that reads
its slot later, behind a conditional branch, is not found (none of glibc's and musl's above is).
"""
from __future__ import annotations

from kernel_model.debug import MemoryFault

from ..errors import DecodeError
from ..insn.decode import decode

MAX_INSNS = 64
STACK_POINTER = {"x86_64": "rsp", "i386": "esp"}


def uses_return_address(read, entry: int, arch: str, bounds) -> bool:
    """Whether the function at `entry` reads its return address (`read(address, size)`: its
    code, unpatched; `bounds(address)`: [start, end) of the function holding `address`, or
    None — the fall-through path ends with its function, as after a call that never returns)."""
    sp, word = STACK_POINTER[arch], 8 if arch == "x86_64" else 4
    pushed, address, seen = 0, entry, set()
    inside = bounds(entry)
    for _ in range(MAX_INSNS):
        if address in seen or inside is None or not inside[0] <= address < inside[1]:
            return False
        seen.add(address)
        try:
            insn = decode(_code_at(read, address), address, arch)
        except (DecodeError, MemoryFault):
            return False
        if _reads_slot(insn, sp, pushed, word):
            return True
        moved = _sp_change(insn, sp, word)
        if moved is None:
            return False                    # sp changed in a way not followed, or control left
        pushed += moved
        if insn.base_mnemonic == "jmp" and insn.branch_target is not None:
            address = insn.branch_target
            if not inside[0] <= address < inside[1]:
                inside = bounds(address)            # a tail call: on in the function jumped to
        else:
            address = insn.next_address
    return False


def _code_at(read, address: int) -> bytes:
    """Up to the longest instruction's 15 bytes, fewer at the end of the mapping."""
    for size in range(15, 0, -1):
        try:
            return read(address, size)
        except MemoryFault:
            continue
    raise MemoryFault(f"{address:#x}: not mapped")


def _reads_slot(insn, sp: str, pushed: int, word: int) -> bool:
    if insn.base_mnemonic == "pop" and pushed == 0:
        return True
    for operand in insn.operands:
        mem = operand.mem
        if operand.kind == "mem" and "r" in operand.access and mem.base == sp and mem.index is None \
                and mem.disp == pushed and operand.size >= word:
            return True
    return False


def _sp_change(insn, sp: str, word: int) -> int | None:
    """Bytes the instruction pushes (negative: pops), or None when the walk stops here."""
    name = insn.base_mnemonic
    groups = insn.groups
    if "ret" in groups or "iret" in groups or name in ("jmp", "ljmp") and insn.branch_target is None:
        return None
    if "call" in groups:
        return 0                            # the callee returns with sp where it was
    if name == "push":
        return word
    if name == "pop":
        return -word
    if sp not in insn.regs_written:
        return 0
    if name in ("sub", "add") and len(insn.operands) == 2 and insn.operands[1].kind == "imm" \
            and insn.operands[0].kind == "reg":
        return insn.operands[1].imm if name == "sub" else -insn.operands[1].imm
    return None
