"""Where a relocation check puts things: the original instruction, its relocated copy (the XOL
or tool page), data and stack, and the registers and flags it starts from.

A `Layout` is plain data: its `repr` is Python that rebuilds it (the data and stack contents
come from `fill_seed`), so a shrunk counterexample pastes into an `@example(...)` line.

`layouts(arch, placement)` draws one. "near" puts the XOL page within 1 GiB of the original
(x86-64: a rel32 and a disp32 reach) or anywhere (i386, where rel32 always reaches, the IP
wrapping modulo 2^32: Intel SDM Vol. 2A, JMP); "far" (x86-64) puts it more than 2 GiB away
from the original code and its data, so jumps back must be absolute and a RIP-relative
operand goes through a scratch register.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

from hypothesis import assume
from hypothesis import strategies as st

from emu.machine import Machine
from emu.memory import PROT_EXEC, PROT_READ, PROT_WRITE

PAGE = 0x1000
INT3 = b"\xcc"
GIB = 1 << 30
ARCHES = ("i386", "x86_64")
PLACEMENTS = {"i386": ("near",), "x86_64": ("near", "far")}
WORD = {"i386": 4, "x86_64": 8}
GPRS = {"i386": ("eax", "ebx", "ecx", "edx", "esi", "edi", "ebp"),
        "x86_64": ("rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "r8", "r9", "r10", "r11",
                   "r12", "r13", "r14", "r15")}
LEGACY = {"i386": GPRS["i386"], "x86_64": GPRS["x86_64"][:7]}
SP = {"i386": "esp", "x86_64": "rsp"}
# Highest page-aligned address a region may start at; indirect-branch targets live above it.
TOP = {"i386": 0xF000_0000, "x86_64": 0x7FFE_0000_0000}
SENTINEL = {"i386": 0xF800_0000, "x86_64": 0x7FFF_F000_0000}
# CF PF AF ZF SF OF (Intel SDM Vol. 1, 3.4.3.1), and DF, which string instructions read
STATUS_FLAGS = 0x8D5
LOADED_FLAGS = STATUS_FLAGS | 0x400
FILL_PAGES = 6                  # 2 pages of data, then 4 of stack


@dataclass
class Layout:
    """One placement and starting state. `orig`: the original instruction's address; `xol`:
    where the relocated code goes; `data`: 2 pages; `stack`: 4 pages; `writes`: bytes put
    over the fill before the run (an indirect branch's target)."""
    arch: str
    orig: int
    xol: int
    data: int
    stack: int
    regs: dict[str, int]
    flags: int
    fill_seed: int = 0
    writes: list[tuple[int, bytes]] = field(default_factory=list)

    @property
    def fill(self) -> bytes:
        """The data and stack pages' contents (seeded: the same bytes on every machine)."""
        return random.Random(self.fill_seed).randbytes(FILL_PAGES * PAGE)

    @property
    def regions(self) -> list[tuple[int, int, int]]:
        rx, rw = PROT_READ | PROT_EXEC, PROT_READ | PROT_WRITE
        return [(self.orig & ~(PAGE - 1), PAGE, rx), (self.xol & ~(PAGE - 1), PAGE, rx),
                (self.data, 2 * PAGE, rw), (self.stack, 4 * PAGE, rw)]

    def disjoint(self) -> bool:
        spans = sorted((s, s + n) for s, n, _ in self.regions)
        return all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))

    def __repr__(self) -> str:
        regs = ", ".join(f"{name!r}: {value:#x}" for name, value in self.regs.items())
        writes = ", ".join(f"({a:#x}, {d!r})" for a, d in self.writes)
        return (f"Layout({self.arch!r}, orig={self.orig:#x}, xol={self.xol:#x}, "
                f"data={self.data:#x}, stack={self.stack:#x}, regs={{{regs}}}, "
                f"flags={self.flags:#x}, fill_seed={self.fill_seed:#x}, writes=[{writes}])")


def machine_for(layout: Layout, insn_bytes: bytes, relocated: bytes) -> Machine:
    """A Machine with the layout's pages (code pages filled with int3 around the original and
    the relocated code), contents, registers and flags."""
    m = Machine(layout.arch)
    for start, size, perms in layout.regions:
        m.mem.map(start, size, perms)
        m.mem.write(start, INT3 * size if perms & PROT_EXEC else b"\0" * size)
    fill = layout.fill
    m.mem.write(layout.data, fill[:2 * PAGE])
    m.mem.write(layout.stack, fill[2 * PAGE:])
    m.mem.write(layout.orig, insn_bytes)
    m.mem.write(layout.xol, relocated)
    for address, data in layout.writes:
        m.mem.write(address, data)
    for name, value in layout.regs.items():
        m.set_reg(name, value)
    m.set_reg("eflags" if layout.arch == "i386" else "rflags", 0x2 | (layout.flags & LOADED_FLAGS))
    return m


@st.composite
def layouts(draw, arch: str, placement: str = "near") -> Layout:
    """A layout for `arch` ("i386", "x86_64") and `placement` ("near", or "far" on x86-64)."""
    if placement not in PLACEMENTS[arch]:
        raise ValueError(f"placement {placement!r} does not exist on {arch} "
                         f"(have: {', '.join(PLACEMENTS[arch])})")
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
    layout.fill_seed = draw(st.integers(0, 2**32 - 1))     # hypothesis-chosen, reproducible
    return layout
