"""Where each vDSO function's canonical frame address moves: the rows of its CFI table.

The CFA is the stack pointer the caller had before its call (the psABIs' definition: i386
and x86-64 alike), so at a function's first byte it is sp + the word the call pushed. The
vDSO's functions move the stack pointer only by push, pop and i386's `call here; pop reg`
(finding their own address): this walks the assembled code with capstone, follows jumps so
that the code after a `ret` takes the depth of the jump that reaches it, and gives, in address
order, each instruction offset where sp + N changes N. Linux's vDSO gets the same table from
the compiler (-fasynchronous-unwind-tables) and the assembler's .cfi_* directives
(arch/x86/entry/vdso/vdso32/system_call.S).

Run by assemble.py only (capstone is a dependency, but a run imports neither it nor this).
"""
from __future__ import annotations

_STACK_POINTERS = ("esp", "rsp")


def cfa_rows(arch: str, code: bytes) -> tuple[tuple[int, int], ...]:
    """((offset, cfa offset from sp), ...): the first row is (0, word); each next one an
    instruction where the offset changes."""
    import capstone
    word = 8 if arch == "x86_64" else 4
    mode = capstone.CS_MODE_64 if arch == "x86_64" else capstone.CS_MODE_32
    engine = capstone.Cs(capstone.CS_ARCH_X86, mode)
    instructions = list(engine.disasm(code, 0))
    if sum(insn.size for insn in instructions) != len(code):
        raise ValueError(f"{arch}: capstone did not decode the whole function")
    depth: dict[int, int] = {0: word}
    for insn in instructions:
        if insn.address not in depth:
            raise ValueError(f"{arch}: {insn.address:#x} is reached by no path walked so far")
        after, target, falls = _effect(insn, depth[insn.address], word)
        if target is not None:
            _meet(depth, target, after if insn.mnemonic == "call" else depth[insn.address], arch)
        if falls:
            _meet(depth, insn.address + insn.size, after, arch)
    rows, last = [], None
    for insn in instructions:
        if depth[insn.address] != last:
            rows.append((insn.address, depth[insn.address]))
            last = depth[insn.address]
    return tuple(rows)


def _effect(insn, depth: int, word: int) -> tuple[int, int | None, bool]:
    """(depth after, a branch target or None, whether execution falls through)."""
    mnemonic, operands = insn.mnemonic, insn.op_str
    if mnemonic == "push":
        return depth + word, None, True
    if mnemonic == "pop":
        return depth - word, None, True
    if mnemonic == "ret":
        return depth, None, False
    if mnemonic == "call":
        target = int(operands, 16)
        if target != insn.address + insn.size:
            raise ValueError(f"call at {insn.address:#x}: only `call here` (the next instruction)")
        return depth + word, target, False
    if mnemonic.startswith("j"):
        return depth, int(operands, 16), mnemonic != "jmp"
    if operands.split(",")[0].strip() in _STACK_POINTERS:
        raise ValueError(f"{mnemonic} {operands} at {insn.address:#x} moves the stack pointer")
    return depth, None, True


def _meet(depth: dict[int, int], address: int, value: int, arch: str) -> None:
    if depth.setdefault(address, value) != value:
        raise ValueError(f"{arch}: two stack depths meet at {address:#x}")
