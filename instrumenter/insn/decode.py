"""Decode one x86 instruction once, into every fact the policy and the relocator need.

Like Linux's uprobes (arch/x86/kernel/uprobes.c, `uprobe_init_insn`), a probe decodes the
instruction under it a single time when it is placed; classification and relocation then work
on this `Insn` only. Decoding is capstone's (with detail); this module adds the byte layout
(prefixes, REX/VEX, opcode, ModRM, displacement and immediate offsets) that relocation needs
to rewrite an encoding, and canonical register names so that "does it use rcx?" is one lookup
whatever sub-register (cl, ecx...) the instruction names.
"""
from dataclasses import dataclass
from functools import lru_cache

import capstone
from capstone import x86_const as X

from ..errors import DecodeError

ARCHES = ("i386", "x86_64")
_MODES = {"i386": capstone.CS_MODE_32, "x86_64": capstone.CS_MODE_64}
_MASK = {"i386": 0xFFFF_FFFF, "x86_64": 0xFFFF_FFFF_FFFF_FFFF}
MAX_INSN_LEN = 15        # Intel SDM Vol. 2A, 2.3.11: longer encodings raise #GP

# Legacy prefixes (SDM Vol. 2A, 2.1.1): lock/rep, segment overrides, operand/address size.
LEGACY_PREFIXES = frozenset({0xF0, 0xF2, 0xF3, 0x2E, 0x36, 0x3E, 0x26, 0x64, 0x65, 0x66, 0x67})
LOCK = 0xF0

# Every name of a general-purpose register, mapped to its full-width name per architecture.
_GPR_FAMILIES = (
    ("rax", "eax", "ax", "al", "ah"), ("rbx", "ebx", "bx", "bl", "bh"),
    ("rcx", "ecx", "cx", "cl", "ch"), ("rdx", "edx", "dx", "dl", "dh"),
    ("rsi", "esi", "si", "sil"), ("rdi", "edi", "di", "dil"),
    ("rbp", "ebp", "bp", "bpl"), ("rsp", "esp", "sp", "spl"),
) + tuple((f"r{n}", f"r{n}d", f"r{n}w", f"r{n}b") for n in range(8, 16))
_CANON = {
    "x86_64": {name: fam[0] for fam in _GPR_FAMILIES for name in fam},
    "i386": {name: fam[1] for fam in _GPR_FAMILIES[:8] for name in fam},
}
HIGH_BYTE_REGS = frozenset({"ah", "bh", "ch", "dh"})   # not encodable together with a REX prefix

# capstone's "undefined after this instruction" bits -> EFLAGS bits (SDM Vol. 1, 3.4.3).
_UNDEFINED_FLAG_BITS = (
    (X.X86_EFLAGS_UNDEFINED_CF, 0x001), (X.X86_EFLAGS_UNDEFINED_PF, 0x004),
    (X.X86_EFLAGS_UNDEFINED_AF, 0x010), (X.X86_EFLAGS_UNDEFINED_ZF, 0x040),
    (X.X86_EFLAGS_UNDEFINED_SF, 0x080), (X.X86_EFLAGS_UNDEFINED_OF, 0x800),
)
_GROUP_NAMES = {
    capstone.CS_GRP_JUMP: "jump", capstone.CS_GRP_CALL: "call", capstone.CS_GRP_RET: "ret",
    capstone.CS_GRP_INT: "int", capstone.CS_GRP_IRET: "iret",
    capstone.CS_GRP_PRIVILEGE: "privilege", capstone.CS_GRP_BRANCH_RELATIVE: "branch_relative",
}
_ACCESS = {0: "", capstone.CS_AC_READ: "r", capstone.CS_AC_WRITE: "w",
           capstone.CS_AC_READ | capstone.CS_AC_WRITE: "rw"}


@dataclass(frozen=True)
class MemOperand:
    segment: str | None      # explicit segment override ("fs", "gs"...), else None
    base: str | None         # canonical register name, "rip" for RIP-relative
    index: str | None
    scale: int
    disp: int                # signed displacement as encoded


@dataclass(frozen=True)
class Operand:
    kind: str                # "reg", "imm" or "mem"
    size: int                # bytes
    access: str              # "r", "w", "rw" or "" (e.g. lea's address, nop's operand)
    reg: str | None = None   # as named by the instruction (e.g. "cl"); see Insn.regs_read
    imm: int | None = None
    mem: MemOperand | None = None


@dataclass(frozen=True)
class Insn:
    """One decoded instruction at `address`. Offsets index `raw`."""
    arch: str
    address: int
    raw: bytes
    mnemonic: str
    op_str: str
    prefixes: tuple[int, ...]     # legacy prefix bytes, in encoding order
    rex: int                      # the REX byte, 0 when absent (always 0 on i386)
    vex: int                      # 0, or 2/3 for a VEX prefix (c5/c4), 4 for EVEX (62)
    opcode_offset: int            # first byte after legacy prefixes and REX (VEX included)
    opcode: bytes                 # opcode bytes, 0f/0f38/0f3a escapes included (VEX: 1 byte)
    modrm_offset: int | None
    disp_offset: int | None       # where the displacement sits, if the encoding has one
    disp_size: int
    imm_offset: int | None        # where the (first) immediate sits: rel8/rel32 of branches too
    imm_size: int
    operands: tuple[Operand, ...]
    rip_relative: bool            # has a [rip + disp32] memory operand (x86-64 only)
    branch_target: int | None     # absolute target of a relative jmp/jcc/loop/call
    regs_read: frozenset[str]     # canonical names, explicit and implicit ("rflags" too)
    regs_written: frozenset[str]
    groups: frozenset[str]        # "jump", "call", "ret", "int", "iret", "privilege"...
    flags_undefined: int          # EFLAGS bits the SDM leaves undefined after this instruction

    @property
    def length(self) -> int:
        return len(self.raw)

    @property
    def base_mnemonic(self) -> str:
        """The mnemonic without capstone's prefix words: "lock inc" -> "inc"."""
        return self.mnemonic.rsplit(" ", 1)[-1]

    @property
    def next_address(self) -> int:
        return (self.address + len(self.raw)) & _MASK[self.arch]

    @property
    def modrm(self) -> int | None:
        return None if self.modrm_offset is None else self.raw[self.modrm_offset]

    @property
    def memory_operand(self) -> MemOperand | None:
        return next((op.mem for op in self.operands if op.kind == "mem"), None)

    @property
    def rip_target(self) -> int | None:
        """Absolute address a [rip + disp] operand refers to (from the ORIGINAL address)."""
        if not self.rip_relative:
            return None
        return (self.next_address + self.memory_operand.disp) & _MASK[self.arch]

    def uses(self, reg: str) -> bool:
        """Whether the instruction reads or writes `reg` (canonical name), explicitly or not."""
        return reg in self.regs_read or reg in self.regs_written

    def __str__(self) -> str:
        return f"{self.address:#x}: {self.mnemonic} {self.op_str}".rstrip()


@lru_cache(maxsize=None)
def _disassembler(arch: str) -> capstone.Cs:
    if arch not in _MODES:
        raise DecodeError(f"unknown architecture {arch!r} (expected i386 or x86_64)")
    cs = capstone.Cs(capstone.CS_ARCH_X86, _MODES[arch])
    cs.detail = True
    return cs


def canonical_register(name: str, arch: str) -> str:
    """Full-width name of a general-purpose register ("cl" -> "rcx"); others unchanged."""
    return _CANON[arch].get(name, name)


def decode(code: bytes, address: int, arch: str) -> Insn:
    """Decode the instruction that starts at code[0], placed at `address`."""
    cs = _disassembler(arch)
    if address < 0 or address > _MASK[arch]:
        raise DecodeError(f"address {address:#x} is outside the {arch} address space")
    window = bytes(code[:MAX_INSN_LEN])
    ci = next(cs.disasm(window, address, 1), None)
    if ci is None:
        what = "truncated" if len(window) < MAX_INSN_LEN else "invalid"
        raise DecodeError(f"{what} instruction at {address:#x}: {window.hex(' ') or 'no bytes'}")
    return _insn_from(ci, arch)


def boundaries(code: bytes, start: int, arch: str) -> list[int]:
    """Instruction start addresses of a function body by linear sweep (placement validation)."""
    starts, offset = [], 0
    while offset < len(code):
        insn = decode(code[offset:], start + offset, arch)
        starts.append(start + offset)
        offset += insn.length
    return starts


def instruction_starts(code: bytes, start: int, arch: str) -> tuple[list[int], int]:
    """A linear sweep of `code` placed at `start`: the address of every instruction, and where
    the sweep ended (start + len(code), or the first address where nothing decodes). Lengths
    only (capstone's lite mode): what a boundary check needs, much faster than `decode`."""
    starts, end = [], start
    for address, size, _mnemonic, _operands in _disassembler(arch).disasm_lite(bytes(code), start):
        starts.append(address)
        end = address + size
    return starts, end


def _insn_from(ci, arch: str) -> Insn:
    raw = bytes(ci.bytes)
    canon = _CANON[arch]
    prefixes, rex, vex, opcode_offset = _layout(raw, arch)
    operands = tuple(_operand(ci, op, arch) for op in ci.operands)
    mem = next((op.mem for op in operands if op.kind == "mem"), None)
    groups = frozenset(_GROUP_NAMES[g] for g in ci.groups if g in _GROUP_NAMES)
    read, written = ci.regs_access()
    return Insn(
        arch=arch, address=ci.address, raw=raw, mnemonic=ci.mnemonic, op_str=ci.op_str,
        prefixes=prefixes, rex=rex, vex=vex, opcode_offset=opcode_offset,
        opcode=_opcode_bytes(raw, opcode_offset, vex),
        modrm_offset=ci.modrm_offset or None,
        disp_offset=ci.disp_offset or None, disp_size=ci.disp_size,
        imm_offset=ci.imm_offset or None, imm_size=ci.imm_size,
        operands=operands,
        rip_relative=mem is not None and mem.base == "rip",
        branch_target=_branch_target(ci, groups, arch),
        regs_read=frozenset(canon.get(n, n) for n in map(ci.reg_name, read)),
        regs_written=frozenset(canon.get(n, n) for n in map(ci.reg_name, written)),
        groups=groups,
        flags_undefined=sum(bit for cs_bit, bit in _UNDEFINED_FLAG_BITS if ci.eflags & cs_bit),
    )


def _layout(raw: bytes, arch: str) -> tuple[tuple[int, ...], int, int, int]:
    """Legacy prefixes, REX byte, VEX kind and the opcode's offset (SDM Vol. 2A, 2.1-2.3)."""
    i = 0
    while i < len(raw) and raw[i] in LEGACY_PREFIXES:
        i += 1
    prefixes, rex = tuple(raw[:i]), 0
    if arch == "x86_64" and i < len(raw) and 0x40 <= raw[i] <= 0x4F:
        rex, i = raw[i], i + 1
    vex = 0
    if i + 1 < len(raw) and raw[i] in (0xC4, 0xC5, 0x62):
        # In 32-bit mode c4/c5/62 are LES/LDS/BOUND unless ModRM.mod would be 11 (SDM 2.3.5).
        if arch == "x86_64" or raw[i + 1] >> 6 == 3:
            vex = {0xC5: 2, 0xC4: 3, 0x62: 4}[raw[i]]
    return prefixes, rex, vex, i


def _opcode_bytes(raw: bytes, offset: int, vex: int) -> bytes:
    if vex:     # the opcode byte follows the 2-, 3- or 4-byte VEX/EVEX prefix
        return raw[offset + vex:offset + vex + 1]
    count = 1
    if raw[offset] == 0x0F:
        count = 3 if offset + 1 < len(raw) and raw[offset + 1] in (0x38, 0x3A) else 2
    return raw[offset:offset + count]


def _operand(ci, op, arch: str) -> Operand:
    access = _ACCESS.get(op.access, "rw")
    if op.type == X.X86_OP_REG:
        return Operand("reg", op.size, access, reg=ci.reg_name(op.reg))
    if op.type == X.X86_OP_IMM:
        return Operand("imm", op.size, access, imm=op.imm)
    m = op.mem
    name = lambda r: canonical_register(ci.reg_name(r), arch) if r else None  # noqa: E731
    base = name(m.base)
    if base == "eip":           # address-size prefix on RIP-relative: still RIP-relative
        base = "rip"
    return Operand("mem", op.size, access, mem=MemOperand(
        segment=ci.reg_name(m.segment) if m.segment else None, base=base,
        index=name(m.index), scale=m.scale, disp=m.disp))


def _branch_target(ci, groups: frozenset[str], arch: str) -> int | None:
    if "branch_relative" not in groups:
        return None
    imm = next((op.imm for op in ci.operands if op.type == X.X86_OP_IMM), None)
    return None if imm is None else imm & _MASK[arch]
