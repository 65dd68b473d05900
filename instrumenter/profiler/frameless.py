"""Interrupted instructions whose return address is the word on the stack top, in code that has
neither CFI nor a frame pointer: the unwinder steps out of them as out of a function's first
instruction (unwind.py), and teaches the timer's C handler the same ("no-frame").

- a `ret`: it pops the return address from there, whatever code it ends (musl's i386
  `int $0x80; ret` stub has no symbol);
- gcc's i386 PIC thunk, `mov (%esp),%reg; ret` (__x86.get_pc_thunk.REG), which a stripped
  object leaves with neither a symbol nor an FDE (Debian's libjq: some of jq's samples);
- the indirect jump of a PLT stub: the call landed there and the stub jumps on without touching
  the stack. A static glibc program's `.plt` (its IFUNCs' IRELATIVE slots, already bound) has
  no FDE (the linker writes one for a dynamic object's lazy PLT only), and Debian's bash-static
  spends some of its samples in it. Recognised, as gdb's in_plt_section does, by the section
  the section headers name, and by the instruction itself: `endbr`, `jmp *m`, `bnd jmp *m`.
"""
from __future__ import annotations

RET = 0xC3
# mov (%esp),%eax/%ecx/%edx/%ebx/%ebp/%esi/%edi: ModRM mod 00, rm 100 (a SIB byte follows: 0x24)
PIC_THUNK_MODRM = frozenset({0x04, 0x0C, 0x14, 0x1C, 0x2C, 0x34, 0x3C})
PLT_SECTIONS = (".plt", ".plt.sec", ".iplt", ".plt.got")
ENDBR = {64: b"\xf3\x0f\x1e\xfa", 32: b"\xf3\x0f\x1e\xfb"}
BND = 0xF2
JMP_INDIRECT = 0xFF         # ff /4: jmp r/m (Intel SDM vol. 2A, JMP)


def is_ret(code: bytes) -> bool:
    return code[:1] == bytes([RET])


def is_pic_thunk(code: bytes, bits: int) -> bool:
    return bits == 32 and len(code) >= 4 and code[0] == 0x8B and code[1] in PIC_THUNK_MODRM \
        and code[2] == 0x24 and code[3] == RET


def is_plt_jump(code: bytes, bits: int) -> bool:
    """`code` starts with a PLT stub's endbr or its indirect jump (ff /4, bnd-prefixed or not)."""
    if code.startswith(ENDBR[bits]):
        return True
    if code[:1] == bytes([BND]):
        code = code[1:]
    return len(code) >= 2 and code[0] == JMP_INDIRECT and (code[1] >> 3) & 7 == 4


def in_plt(image, address: int) -> bool:
    """`address` lies in a PLT section of `image` (by its section headers)."""
    sections = image.sections if image is not None else {}
    for name in PLT_SECTIONS:
        bounds = sections.get(name)
        if bounds is not None and bounds[0] <= address < bounds[0] + bounds[1]:
            return True
    return False
