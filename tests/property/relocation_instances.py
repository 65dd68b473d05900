"""Hypothesis strategies: instruction instances and machine states built from the policy forms.

Everything comes from instrumenter/insn/policy.py (`forms_of`): a class or form added there is
generated here without changes. Placements: "near" puts the XOL page within 1 GiB of the
original (x86-64) or anywhere (i386, where rel32 always reaches); "far" (x86-64) puts it more
than 2 GiB away from the original code and its data, forcing absolute jumps and the
scratch-register path.
"""
import random
import re
import struct

from hypothesis import assume
from hypothesis import strategies as st
from keystone import KS_ARCH_X86, KS_MODE_32, KS_MODE_64, Ks

from instrumenter.insn.decode import decode
from instrumenter.insn.forms import Form
from instrumenter.insn.policy import InsnClass

from .relocation_harness import PAGE, Layout

WORD = {"i386": 4, "x86_64": 8}
GPRS = {"i386": ("eax", "ebx", "ecx", "edx", "esi", "edi", "ebp"),
        "x86_64": ("rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "r8", "r9", "r10", "r11",
                   "r12", "r13", "r14", "r15")}
LEGACY = {"i386": GPRS["i386"], "x86_64": GPRS["x86_64"][:7]}
SP = {"i386": "esp", "x86_64": "rsp"}
# Highest page-aligned address a region may start at; indirect-branch targets live above it.
TOP = {"i386": 0xF000_0000, "x86_64": 0x7FFE_0000_0000}
SENTINEL = {"i386": 0xF800_0000, "x86_64": 0x7FFF_F000_0000}
RIP_MARK = 0x11223344             # placeholder displacement, patched after decoding
GIB = 1 << 30
_KS = {"i386": Ks(KS_ARCH_X86, KS_MODE_32), "x86_64": Ks(KS_ARCH_X86, KS_MODE_64)}


def widen(name: str, arch: str) -> str:
    return "r" + name[1:] if arch == "x86_64" else name


def narrow32(name: str) -> str:
    return name + "d" if name[1:].isdigit() else "e" + name[1:]


@st.composite
def layouts(draw, arch: str, placement: str) -> Layout:
    top_page = TOP[arch] // PAGE
    orig_page = draw(st.integers(0x10, top_page - 0x40))
    data_page = orig_page + draw(st.integers(-0x10000, 0x10000))          # within ±256 MiB
    stack_page = orig_page + draw(st.integers(-0x20000, 0x20000))
    if arch == "i386":
        xol_page = draw(st.integers(0x10, top_page - 0x10))
    elif placement == "near":
        xol_page = orig_page + draw(st.integers(-GIB // PAGE, GIB // PAGE))
    else:
        xol_page = draw(st.integers(0x10, top_page - 0x10))
        far = 2 * GIB + 0x10_0000
        assume(abs(xol_page - orig_page) * PAGE > far and abs(xol_page - data_page) * PAGE > far)
    for page in (data_page, stack_page, xol_page):
        assume(0x10 <= page < top_page - 0x10)
    word = WORD[arch]
    regs = {r: draw(st.integers(0, (1 << (8 * word)) - 1)) for r in GPRS[arch]}
    regs[SP[arch]] = stack_page * PAGE + 0x2000 + draw(st.integers(-0x100, 0x100))
    layout = Layout(arch, orig=orig_page * PAGE + draw(st.integers(0x40, 0xF00)),
                    xol=xol_page * PAGE + draw(st.integers(0, 0xF80)), data=data_page * PAGE,
                    stack=stack_page * PAGE, regs=regs, flags=draw(st.integers(0, 0xFFF)))
    assume(layout.disjoint())
    seed = draw(st.integers(0, 2**32 - 1))
    layout.fill = random.Random(seed).randbytes(6 * PAGE)     # hypothesis-chosen, reproducible
    return layout


@st.composite
def instances(draw, form: Form, arch: str, layout: Layout):
    """Instruction bytes for `form` at layout.orig, with registers prepared for it."""
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


def plant_indirect_target(draw, insn, cls: InsnClass, layout: Layout) -> None:
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
