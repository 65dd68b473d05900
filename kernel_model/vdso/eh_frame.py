"""The vDSO's unwind tables: .eh_frame and .eh_frame_hdr (PT_GNU_EH_FRAME).

A program's own unwinder (libgcc's _Unwind_Find_FDE through dl_iterate_phdr, gdb, perf) finds
a vDSO function's frame from these, as from any shared object's (LSB Core, "Exception Frames";
the psABIs' DWARF register numbers). Linux ships them in both vDSOs: the x86-64 one from the
compiler, the i386 one with hand-written FDEs for the signal trampolines
(arch/x86/entry/vdso/vdso32/sigreturn.S).

Ordinary functions get one CIE ("zR": CFA = sp + word, the return address at CFA - word) and
an FDE each whose instructions follow cfa_rows.py's rows. The i386 trampolines get the "zRS"
CIE (S: a signal frame, so the unwinder takes the next pc as it is, not as a return address
minus one) and FDEs that, as Linux's, start one byte before the trampoline (an unwinder looks
up the return address minus one) and give every register, the CFA included, by a
DW_CFA_expression reading the sigcontext the kernel pushed: esp + 4 into the non-RT frame at
its first byte (sig is still on the stack; `popl %eax` drops it, so 0 after), esp + 160 into
the RT frame. The offsets are Linux's (arch/x86/kernel/asm-offsets_32.c: IA32_SIGCONTEXT_*,
IA32_RT_SIGFRAME_sigcontext), written here rather than imported from the frame builder
(kernel_model/signals/frame.py imports the process code, which maps the vDSO);
tests/unit/kernel_model/vdso/test_eh_frame.py checks them against the frames it builds.
"""
from __future__ import annotations

import struct

# DWARF call frame instructions and expression operators (DWARF 4, 6.4.2 and 2.5.1)
DW_CFA_advance_loc, DW_CFA_offset, DW_CFA_advance_loc1 = 0x40, 0x80, 0x02
DW_CFA_def_cfa, DW_CFA_def_cfa_offset = 0x0C, 0x0E
DW_CFA_def_cfa_expression, DW_CFA_expression = 0x0F, 0x10
DW_OP_breg_sp, DW_OP_deref = 0x74, 0x06          # DW_OP_breg4: esp on i386
DW_EH_PE_pcrel_sdata4, DW_EH_PE_udata4, DW_EH_PE_datarel_sdata4 = 0x1B, 0x03, 0x3B

# (stack pointer, return address) DWARF register numbers: the psABIs' tables
REGISTERS = {"x86_64": (7, 16), "i386": (4, 8)}
# i386 DWARF numbers of the registers a sigreturn restores (eax ecx edx ebx, ebp esi edi, eip)
_I386_DWARF = {"eax": 0, "ecx": 1, "edx": 2, "ebx": 3, "esp": 4, "ebp": 5, "esi": 6, "edi": 7}
# struct sigcontext (i386, uapi/asm/sigcontext.h): gs, fs, es, ds, then these, trapno, err, eip
SC32_GPRS = ("edi", "esi", "ebp", "esp", "ebx", "edx", "ecx", "eax")
_SIGCONTEXT_GPR = 16
_SIGCONTEXT_EIP = _SIGCONTEXT_GPR + 4 * len(SC32_GPRS) + 8

# where the sigcontext is, from esp at the trampoline's first byte (the handler's `ret` popped
# pretcode): struct sigframe_ia32 has sig before it; struct rt_sigframe_ia32 has sig, pinfo,
# puc, a 128-byte siginfo and the ucontext's 20-byte head (asm/sigframe.h)
SIGCONTEXT_AT = {"__kernel_sigreturn": 4, "__kernel_rt_sigreturn": 4 + 4 + 4 + 128 + 20}
POPPED_FIRST = {"__kernel_sigreturn": 1}       # `popl %eax` (1 byte) drops sig: 4 bytes less


def uleb(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def sleb(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        done = (value == 0 and not byte & 0x40) or (value == -1 and byte & 0x40)
        out.append(byte | (0 if done else 0x80))
        if done:
            return bytes(out)


def _advance(delta: int) -> bytes:
    return bytes((DW_CFA_advance_loc | delta,)) if delta < 0x40 else bytes((DW_CFA_advance_loc1, delta))


def _padded(blob: bytes, align: int) -> bytes:
    return blob + bytes(-len(blob) % align)          # DW_CFA_nop is 0


def _cie(arch: str, augmentation: bytes, initial: bytes) -> bytes:
    word = 8 if arch == "x86_64" else 4
    body = (struct.pack("<IB", 0, 1) + augmentation + b"\0" + uleb(1) + sleb(-word)
            + bytes((REGISTERS[arch][1],)) + uleb(1) + bytes((DW_EH_PE_pcrel_sdata4,)) + initial)
    body = _padded(struct.pack("<I", 0) + body, word)[4:]
    return struct.pack("<I", len(body)) + body


def _fde(arch: str, here: int, cie_at: int, start: int, size: int, instructions: bytes) -> bytes:
    """An FDE written at address `here` for the code [start, start + size)."""
    word = 8 if arch == "x86_64" else 4
    body = struct.pack("<Iii", here + 4 - cie_at, start - (here + 8), size) + uleb(0) + instructions
    body = _padded(struct.pack("<I", 0) + body, word)[4:]
    return struct.pack("<I", len(body)) + body


def ordinary_instructions(rows: tuple[tuple[int, int], ...]) -> bytes:
    """DW_CFA_def_cfa_offset at each row after the first (the CIE's), advancing between."""
    out, at = bytearray(), 0
    for offset, cfa in rows[1:]:
        out += _advance(offset - at) + bytes((DW_CFA_def_cfa_offset,)) + uleb(cfa)
        at = offset
    return bytes(out)


def _sigcontext_rules(at: int) -> bytes:
    """CFA = *(esp + at + sigcontext.esp); each register at esp + at + its sigcontext slot."""
    sp_slot = at + _SIGCONTEXT_GPR + 4 * SC32_GPRS.index("esp")
    expr = bytes((DW_OP_breg_sp,)) + sleb(sp_slot) + bytes((DW_OP_deref,))
    out = bytearray((DW_CFA_def_cfa_expression,)) + uleb(len(expr)) + expr
    slots = {_I386_DWARF[name]: _SIGCONTEXT_GPR + 4 * index
             for index, name in enumerate(SC32_GPRS) if name != "esp"}
    slots[REGISTERS["i386"][1]] = _SIGCONTEXT_EIP
    for number in sorted(slots):
        expr = bytes((DW_OP_breg_sp,)) + sleb(at + slots[number])
        out += bytes((DW_CFA_expression,)) + uleb(number) + uleb(len(expr)) + expr
    return bytes(out)


def trampoline_instructions(name: str) -> bytes:
    """From the byte before the trampoline: the rules at its first byte, and, for the non-RT
    one, again after its `popl %eax` (the FDE starts one byte early: advance 1 + 1)."""
    out = _sigcontext_rules(SIGCONTEXT_AT[name])
    popped = POPPED_FIRST.get(name)
    if popped:
        out += _advance(1 + popped) + _sigcontext_rules(SIGCONTEXT_AT[name] - 4)
    return out


def eh_frame(arch: str, address: int, functions: list[tuple[str, int, int, tuple]]) -> tuple[bytes, list]:
    """(.eh_frame's bytes at `address`, [(pc start, FDE address)]) for (name, start, size,
    CFA rows) of every function; the section ends with a zero terminator."""
    sp, ra = REGISTERS[arch]
    word = 8 if arch == "x86_64" else 4
    ordinary = _cie(arch, b"zR", bytes((DW_CFA_def_cfa,)) + uleb(sp) + uleb(word)
                    + bytes((DW_CFA_offset | ra,)) + uleb(1))
    out, table, signal_cie = bytearray(ordinary), [], None
    for name, start, size, rows in functions:
        if name in SIGCONTEXT_AT:
            if signal_cie is None:
                signal_cie = address + len(out)
                out += _cie(arch, b"zRS", b"")
            cie, start, size, instructions = signal_cie, start - 1, size + 1, trampoline_instructions(name)
        else:
            cie, instructions = address, ordinary_instructions(rows)
        table.append((start, address + len(out)))
        out += _fde(arch, address + len(out), cie, start, size, instructions)
    return bytes(out + bytes(4)), table


def eh_frame_hdr(address: int, eh_frame_at: int, table: list[tuple[int, int]]) -> bytes:
    """The binary search table libgcc and gdb read (LSB Core, .eh_frame_hdr): version 1,
    eh_frame_ptr pc-relative, the count, and (pc, FDE) pairs relative to this section, by pc."""
    head = struct.pack("<BBBBiI", 1, DW_EH_PE_pcrel_sdata4, DW_EH_PE_udata4, DW_EH_PE_datarel_sdata4,
                       eh_frame_at - (address + 4), len(table))
    pairs = b"".join(struct.pack("<ii", pc - address, fde - address) for pc, fde in sorted(table))
    return head + pairs
