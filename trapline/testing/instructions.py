"""Hypothesis strategies for instructions, by the instruction policy's classes and forms.

Everything comes from instrumenter/insn/policy.py (`forms_of`): a class or form added there is
generated here without changes. A form is a template (instrumenter/insn/forms.py); `instances`
fills it for one layout: registers, immediates, branch displacements, a RIP-relative operand
aimed into the layout's data page, pointer registers aimed at data, frame registers at the
stack, counters small (rep). `plant_indirect_target` makes the target of an indirect call,
jmp or ret an unmapped address, so the run ends cleanly there.
"""
from __future__ import annotations

import re
import struct

from hypothesis import strategies as st
from keystone import KS_ARCH_X86, KS_MODE_32, KS_MODE_64, Ks

from instrumenter.insn.decode import Insn, decode
from instrumenter.insn.forms import Form
from instrumenter.insn.policy import RELOCATABLE, InsnClass, forms_of

from .layouts import GPRS, LEGACY, SENTINEL, SP, WORD, Layout

RIP_MARK = 0x11223344             # placeholder displacement, patched after decoding
_KS = {"i386": Ks(KS_ARCH_X86, KS_MODE_32), "x86_64": Ks(KS_ARCH_X86, KS_MODE_64)}


def class_names() -> dict[str, InsnClass]:
    """The relocatable classes by name ("rip-relative", "jcc-rel"...: InsnClass values)."""
    return {cls.value: cls for cls in sorted(RELOCATABLE, key=lambda c: c.value)}


def classes_of(arch: str) -> list[InsnClass]:
    """The relocatable classes that have forms on `arch`, in a stable order."""
    return [cls for cls in class_names().values() if forms_of(cls, arch)]


def widen(name: str, arch: str) -> str:
    return "r" + name[1:] if arch == "x86_64" else name


def narrow32(name: str) -> str:
    return name + "d" if name[1:].isdigit() else "e" + name[1:]


@st.composite
def instances(draw, form: Form, arch: str, layout: Layout) -> Insn:
    """Instruction bytes for `form` at layout.orig, decoded, with layout.regs prepared for it
    (the layout is changed in place: pointers, frames and counters)."""
    pointers = [widen(r, arch) for r in form.pointers]
    legacy_only = "{r8h}" in form.text
    regs = LEGACY[arch] if legacy_only else GPRS[arch]

    def fill(match: re.Match) -> str:
        key = match.group(1)
        if key == "r":
            return draw(st.sampled_from(regs))
        if key == "r32":
            return narrow32(draw(st.sampled_from(regs))) if arch == "x86_64" \
                else draw(st.sampled_from(regs))
        if key == "p":
            reg = draw(st.sampled_from(regs))
            pointers.append(reg)
            return reg
        return _fill_value(draw, key, arch, layout)

    text = re.sub(r"\{(\w+)\}", fill, form.text.replace("{rip}", f"[rip + {RIP_MARK:#x}]"))
    if form.is_hex:
        code = bytes.fromhex(text[4:])
    else:
        code = bytes(_KS[arch].asm(text, layout.orig)[0])
    insn = decode(code, layout.orig, arch)
    if insn.rip_relative:
        target = layout.data + 0x100 + 16 * draw(st.integers(0, 0xD0))   # 16-aligned (movaps)
        disp = target - insn.next_address
        code = code[:insn.disp_offset] + struct.pack("<i", disp) + code[insn.disp_offset + 4:]
        insn = decode(code, layout.orig, arch)
    for reg in pointers:
        layout.regs[reg] = layout.data + 0x800 + draw(st.integers(-0x100, 0x100))
    for reg in form.frames:
        layout.regs[widen(reg, arch)] = layout.stack + 0x2400 + draw(st.integers(0, 0x100))
    for reg in form.counts:
        layout.regs[widen(reg, arch)] = draw(st.integers(0, 16))
    return insn


def _fill_value(draw, key: str, arch: str, layout: Layout) -> str:
    simple = {
        "r8": lambda: draw(st.sampled_from(("al", "bl", "cl", "dl"))),
        "r8h": lambda: draw(st.sampled_from(("ah", "bh", "ch", "dh"))),
        "sp": lambda: SP[arch],
        "w": lambda: "dword" if arch == "i386" else "qword",
        "d8": lambda: str(draw(st.integers(-128, 127))),
        "imm8": lambda: str(draw(st.integers(0, 31))),
        "imm16": lambda: str(2 * draw(st.integers(0, 32))),
        "imm32": lambda: str(draw(st.integers(-2**31, 2**31 - 1))),
        "nest": lambda: str(draw(st.integers(0, 3))),
        "abs": lambda: hex(layout.data + draw(st.integers(0, 0x1FF0))),
        "cc": lambda: format(draw(st.integers(0, 15)), "x"),
        "rel8": lambda: struct.pack("<b", draw(st.integers(-128, 127))).hex(),
        "rel32": lambda: struct.pack("<i", draw(st.integers(-2**31, 2**31 - 1))).hex(),
    }
    return simple[key]()


def plant_indirect_target(draw, insn: Insn, cls: InsnClass, layout: Layout) -> None:
    """Make the target of an indirect call/jmp/ret an unmapped address (a clean exit)."""
    arch, word = layout.arch, WORD[layout.arch]
    sentinel = SENTINEL[arch] + 16 * draw(st.integers(0, 0xFFFF))
    if cls is InsnClass.RET:
        layout.writes.append((layout.regs[SP[arch]], sentinel.to_bytes(word, "little")))
        return
    if cls not in (InsnClass.CALL_INDIRECT, InsnClass.JMP_INDIRECT):
        return
    op = insn.operands[0]
    if op.kind == "reg":
        if widen(op.reg, arch) != SP[arch]:      # call rsp: the (non-executable) stack it is
            layout.regs[widen(op.reg, arch)] = sentinel
        return
    mem = op.mem
    base = insn.next_address if mem.base == "rip" else layout.regs.get(mem.base, 0)
    index = layout.regs.get(mem.index, 0) * mem.scale if mem.index else 0
    address = (base + index + mem.disp) & ((1 << (8 * word)) - 1)
    layout.writes.append((address, sentinel.to_bytes(word, "little")))
