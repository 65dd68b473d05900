"""Classic BPF as seccomp runs it: the checks at load time and the interpreter.

An instruction is struct sock_filter {u16 code; u8 jt; u8 jf; u32 k} (include/uapi/linux/filter.h).
A filter is accepted as net/core/filter.c bpf_check_classic accepts it (1 to BPF_MAXINSNS
instructions of known codes, no division by a constant 0, shifts by constants under 32, scratch
slots under BPF_MEMWORDS, jumps inside the program, a RET last, no scratch slot read before
every path to it stored it: check_load_and_stores), then as kernel/seccomp.c
seccomp_check_filter narrows it: absolute loads are 32-bit, aligned, inside struct
seccomp_data; the packet length is sizeof(struct seccomp_data); no MOD, no indirect or byte
loads. Either refusal is EINVAL.

The interpreter has the accumulator A, the index register X (32 bits each) and 16 scratch words;
a division by X = 0 ends the filter with 0 (the classic-to-eBPF conversion's check), shifts by X
take its low 5 bits (the eBPF interpreter's ALU32 shift), comparisons are unsigned.
"""
import struct

from .. import errno as E
from ..errno import GuestErrno

BPF_MAXINSNS, BPF_MEMWORDS, SECCOMP_DATA_SIZE = 4096, 16, 64
INSN = struct.Struct("<HBBI")

# classes, sizes, modes, operations, sources (include/uapi/linux/bpf_common.h)
LD, LDX, ST, STX, ALU, JMP, RET, MISC = range(8)
W, H, B = 0x00, 0x08, 0x10
IMM, ABS, IND, MEM, LEN, MSH = 0x00, 0x20, 0x40, 0x60, 0x80, 0xA0
ADD, SUB, MUL, DIV, OR, AND, LSH, RSH, NEG, MOD, XOR = (
    0x00, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x80, 0x90, 0xA0)
JA, JEQ, JGT, JGE, JSET = 0x00, 0x10, 0x20, 0x30, 0x40
K, X = 0x00, 0x08
A_SRC = 0x10                        # BPF_RET | BPF_A
TAX, TXA = 0x00, 0x80
MASK32 = 0xFFFF_FFFF

_ALU_OPS = (ADD, SUB, MUL, DIV, OR, AND, LSH, RSH, MOD, XOR)
_CONDITIONAL = frozenset(JMP | op | src for op in (JEQ, JGT, JGE, JSET) for src in (K, X))
# bpf_check_classic's codes[] table: every code classic BPF knows
KNOWN_CODES = frozenset(
    [ALU | op | src for op in _ALU_OPS for src in (K, X)] + [ALU | NEG]
    + [LD | size | mode for size in (W, H, B) for mode in (ABS, IND)]
    + [LD | W | LEN, LD | IMM, LD | MEM, LDX | W | LEN, LDX | B | MSH, LDX | IMM, LDX | MEM,
       ST, STX, MISC | TAX, MISC | TXA, RET | K, RET | A_SRC, JMP | JA] + list(_CONDITIONAL))
# seccomp_check_filter's "explicitly include allowed calls" (absolute word loads and the
# packet length are rewritten before this list is consulted)
SECCOMP_CODES = frozenset(
    [ALU | op | src for op in (ADD, SUB, MUL, DIV, AND, OR, XOR, LSH, RSH) for src in (K, X)]
    + [ALU | NEG, LD | IMM, LDX | IMM, MISC | TAX, MISC | TXA, LD | MEM, LDX | MEM, ST, STX,
       RET | K, RET | A_SRC, JMP | JA] + list(_CONDITIONAL))


def decode(raw: bytes) -> list[tuple[int, int, int, int]]:
    return [INSN.unpack_from(raw, at) for at in range(0, len(raw), INSN.size)]


def _check_instruction(pc: int, insn, length: int) -> None:
    code, jt, jf, k = insn
    if code not in KNOWN_CODES:
        raise GuestErrno(E.EINVAL)
    if code in (ALU | DIV | K, ALU | MOD | K) and k == 0:
        raise GuestErrno(E.EINVAL)
    if code in (ALU | LSH | K, ALU | RSH | K) and k >= 32:
        raise GuestErrno(E.EINVAL)
    if code in (LD | MEM, LDX | MEM, ST, STX) and k >= BPF_MEMWORDS:
        raise GuestErrno(E.EINVAL)
    if code == JMP | JA and k >= length - pc - 1:
        raise GuestErrno(E.EINVAL)
    if code in _CONDITIONAL and (pc + jt + 1 >= length or pc + jf + 1 >= length):
        raise GuestErrno(E.EINVAL)
    # absolute loads at SKF_AD_OFF and above are ancillary data, which seccomp refuses below


def _check_scratch_reads(program) -> None:
    """check_load_and_stores: a scratch slot is read only where every path stored it."""
    masks = [0xFFFF] * len(program)
    valid = 0
    for pc, (code, jt, jf, k) in enumerate(program):
        valid &= masks[pc]
        if code in (ST, STX):
            valid |= 1 << k
        elif code in (LD | MEM, LDX | MEM):
            if not valid >> k & 1:
                raise GuestErrno(E.EINVAL)
        elif code == JMP | JA:
            masks[pc + 1 + k] &= valid
            valid = 0xFFFF
        elif code in _CONDITIONAL:
            masks[pc + 1 + jt] &= valid
            masks[pc + 1 + jf] &= valid
            valid = 0xFFFF


def _for_seccomp(program) -> list:
    """seccomp_check_filter: the seccomp subset, with the length loads made immediates."""
    out = []
    for code, jt, jf, k in program:
        if code == LD | W | ABS:
            if k >= SECCOMP_DATA_SIZE or k & 3:
                raise GuestErrno(E.EINVAL)
        elif code == LD | W | LEN:
            code, k = LD | IMM, SECCOMP_DATA_SIZE
        elif code == LDX | W | LEN:
            code, k = LDX | IMM, SECCOMP_DATA_SIZE
        elif code not in SECCOMP_CODES:
            raise GuestErrno(E.EINVAL)
        out.append((code, jt, jf, k))
    return out


def check_filter(raw: bytes) -> tuple:
    """The filter's instructions as seccomp runs them, or EINVAL."""
    program = decode(raw)
    if not 0 < len(program) <= BPF_MAXINSNS:
        raise GuestErrno(E.EINVAL)
    for pc, insn in enumerate(program):
        _check_instruction(pc, insn, len(program))
    if program[-1][0] not in (RET | K, RET | A_SRC):
        raise GuestErrno(E.EINVAL)
    _check_scratch_reads(program)
    return tuple(_for_seccomp(program))


def _alu(op: int, a: int, v: int) -> int | None:
    """A op v on 32 bits; None: a division by zero (the filter returns 0)."""
    if op == ADD:
        return (a + v) & MASK32
    if op == SUB:
        return (a - v) & MASK32
    if op == MUL:
        return (a * v) & MASK32
    if op == DIV:
        return a // v if v else None
    if op == AND:
        return a & v
    if op == OR:
        return a | v
    if op == XOR:
        return a ^ v
    if op == LSH:
        return (a << (v & 31)) & MASK32
    if op == RSH:
        return a >> (v & 31)
    return (-a) & MASK32                                  # NEG


def _jump(op: int, a: int, v: int) -> bool:
    if op == JEQ:
        return a == v
    if op == JGT:
        return a > v
    if op == JGE:
        return a >= v
    return bool(a & v)                                    # JSET


def run(program, data: bytes) -> int:
    """The filter's 32-bit return value for one struct seccomp_data. A checked program always
    ends: every jump goes forward and the last instruction returns."""
    a = x = pc = 0
    mem = [0] * BPF_MEMWORDS
    while True:
        code, jt, jf, k = program[pc]
        pc += 1
        cls = code & 7
        if cls == RET:
            return a if code & A_SRC else k
        if cls == LD:
            mode = code & 0xE0
            a = struct.unpack_from("<I", data, k)[0] if mode == ABS else mem[k] if mode == MEM else k
        elif cls == LDX:
            x = mem[k] if code & 0xE0 == MEM else k
        elif cls == ST:
            mem[k] = a
        elif cls == STX:
            mem[k] = x
        elif cls == ALU:
            a = _alu(code & 0xF0, a, x if code & X else k)
            if a is None:
                return 0
        elif cls == JMP:
            op = code & 0xF0
            if op == JA:
                pc += k
            else:
                pc += jt if _jump(op, a, x if code & X else k) else jf
        else:
            a, x = (a, a) if code & 0xF8 == TAX else (x, x)
