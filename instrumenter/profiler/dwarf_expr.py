"""A DWARF expression evaluator for the CFI rules that need one (DWARF 5 section 2.5.1: the
stack operations a CFA or a saved-register rule may use).

Compilers use them where a register plus an offset cannot say where the caller's frame is:
the x86-64 PLT (the CFA depends on how far into the 16-byte entry the PC is: binutils' PLT
CFI) and i386 functions that realign the stack (`and $-16,%esp`: the CFA is loaded from the
frame). The expression reads registers of the frame being unwound and words of memory; the
result is the top of the stack. What is not a stack operation (a location such as DW_OP_reg,
a call, a TLS address) stops the walk: it is never approximated.
"""
from __future__ import annotations

from loader.cfi import DWARF_REGISTERS, CfiUnsupported

_BINARY = {
    "DW_OP_plus": lambda a, b: a + b, "DW_OP_minus": lambda a, b: a - b,
    "DW_OP_mul": lambda a, b: a * b, "DW_OP_and": lambda a, b: a & b,
    "DW_OP_or": lambda a, b: a | b, "DW_OP_xor": lambda a, b: a ^ b,
    "DW_OP_shl": lambda a, b: a << b, "DW_OP_shr": lambda a, b: a >> b,
    "DW_OP_ge": lambda a, b: int(a >= b), "DW_OP_gt": lambda a, b: int(a > b),
    "DW_OP_le": lambda a, b: int(a <= b), "DW_OP_lt": lambda a, b: int(a < b),
    "DW_OP_eq": lambda a, b: int(a == b), "DW_OP_ne": lambda a, b: int(a != b),
}
_CONSTANTS = {"DW_OP_const1u", "DW_OP_const1s", "DW_OP_const2u", "DW_OP_const2s", "DW_OP_const4u",
              "DW_OP_const4s", "DW_OP_const8u", "DW_OP_const8s", "DW_OP_constu", "DW_OP_consts"}


def register_offset(op: tuple, bits: int) -> tuple[str, int] | None:
    """(register name, offset) of one `DW_OP_bregN offset` / `DW_OP_bregx N offset`
    operation, else None (another operation, or a register this walk does not name)."""
    name, args = op
    if not name.startswith("DW_OP_breg"):
        return None
    register, offset, _ = _breg(name, args, DWARF_REGISTERS[bits])
    return (register, offset) if register is not None else None


def _breg(name: str, args: tuple, names) -> tuple[str | None, int, int]:
    number, offset = (args[0], args[1]) if name == "DW_OP_bregx" else (int(name[len("DW_OP_breg"):]), args[0])
    return (names[number] if number < len(names) else None), offset, number


def evaluate(ops, registers: dict, read_word, bits: int, initial: tuple[int, ...] = ()) -> int:
    """The value `ops` computes; `registers` by name (emu/registers.py), `read_word(address)`
    reads one target word; `initial` is pushed first (the CFA, for register rules)."""
    mask = (1 << bits) - 1
    names = DWARF_REGISTERS[bits]
    stack = list(initial)
    for name, args in ops:
        if name.startswith("DW_OP_lit"):
            stack.append(int(name[len("DW_OP_lit"):]))
        elif name in _CONSTANTS:
            stack.append(args[0] & mask)
        elif name.startswith("DW_OP_breg"):
            register, offset, number = _breg(name, args, names)
            if register not in registers:
                raise CfiUnsupported(f"{name} reads register {register or number}, unknown in this frame")
            stack.append((registers[register] + offset) & mask)
        elif name in _BINARY:
            b, a = stack.pop(), stack.pop()
            stack.append(_BINARY[name](a, b) & mask)
        elif name == "DW_OP_plus_uconst":
            stack.append((stack.pop() + args[0]) & mask)
        elif name == "DW_OP_deref":
            stack.append(read_word(stack.pop()))
        elif name == "DW_OP_dup":
            stack.append(stack[-1])
        elif name == "DW_OP_drop":
            stack.pop()
        elif name == "DW_OP_swap":
            stack[-1], stack[-2] = stack[-2], stack[-1]
        elif name == "DW_OP_over":
            stack.append(stack[-2])
        elif name == "DW_OP_pick":
            stack.append(stack[-1 - args[0]])
        elif name == "DW_OP_neg":
            stack.append(-stack.pop() & mask)
        elif name == "DW_OP_not":
            stack.append(~stack.pop() & mask)
        else:
            raise CfiUnsupported(f"DWARF operation {name} in a CFI expression")
    if not stack:
        raise CfiUnsupported("empty DWARF expression")
    return stack[-1]
