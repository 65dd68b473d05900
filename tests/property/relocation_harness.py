"""Run one instruction in place and its relocated copy out of line, from the same state.

Both machines get the SAME memory layout and contents — the original code page (filled with
int3 around the instruction), the XOL page (filled with int3 around the relocated code), data
pages, stack pages — and the same registers and flags. Only the start address differs. Each
runs until control leaves the instruction: an int3 of the filler (TRAP, pc = after it) or a
fetch from an address that is not mapped or not executable (FAULT). Then the whole
architectural state is compared.
"""
from dataclasses import dataclass, field

from emu.exits import Exit
from emu.machine import Machine
from emu.memory import PROT_EXEC, PROT_READ, PROT_WRITE

PAGE = 0x1000
INT3 = b"\xcc"
BUDGET = 10_000          # a safety net only: every scenario ends in a trap or a fault long before
_STATUS_FLAGS = 0x8D5 | 0x400    # CF PF AF ZF SF OF, and DF (string instructions read it)


@dataclass
class Layout:
    arch: str
    orig: int                 # address of the original instruction
    xol: int                  # address of the relocated code
    data: int                 # 2 pages of data
    stack: int                # 4 pages of stack
    regs: dict[str, int]
    flags: int
    fill: bytes = b""         # contents of data + stack (6 pages)
    writes: list[tuple[int, bytes]] = field(default_factory=list)   # e.g. indirect targets

    @property
    def regions(self) -> list[tuple[int, int, int]]:
        rx, rw = PROT_READ | PROT_EXEC, PROT_READ | PROT_WRITE
        return [(self.orig & ~(PAGE - 1), PAGE, rx), (self.xol & ~(PAGE - 1), PAGE, rx),
                (self.data, 2 * PAGE, rw), (self.stack, 4 * PAGE, rw)]

    def disjoint(self) -> bool:
        spans = sorted((s, s + n) for s, n, _ in self.regions)
        return all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))


def build(layout: Layout, insn_bytes: bytes, relocated: bytes) -> Machine:
    m = Machine(layout.arch)
    for start, size, perms in layout.regions:
        m.mem.map(start, size, perms)
        m.mem.write(start, INT3 * size if perms & PROT_EXEC else b"\0" * size)
    m.mem.write(layout.data, layout.fill[:2 * PAGE])
    m.mem.write(layout.stack, layout.fill[2 * PAGE:])
    m.mem.write(layout.orig, insn_bytes)
    m.mem.write(layout.xol, relocated)
    for address, data in layout.writes:
        m.mem.write(address, data)
    for name, value in layout.regs.items():
        m.set_reg(name, value)
    m.set_reg("eflags" if layout.arch == "i386" else "rflags", 0x2 | (layout.flags & _STATUS_FLAGS))
    return m


@dataclass
class Outcome:
    exit: Exit
    regs: dict[str, int]
    flags: int
    memory: dict[int, bytes]


def run(m: Machine, start: int, layout: Layout) -> Outcome:
    exit_ = m.run(start, count=BUDGET)
    regs = m.registers()
    memory = {s: m.mem.read(s, n) for s, n, _ in layout.regions}
    return Outcome(exit_, dict(regs.gpr), regs.flags, memory)


def first_difference(a: Outcome, b: Outcome, *, undefined_flags: int, stack: int,
                     dead_below: int) -> str | None:
    """None when the two outcomes agree; else a description of the first difference.

    Flags the SDM leaves undefined for the instruction are masked; stack bytes below
    `dead_below` (memory the ABI does not preserve, see instrumenter/insn/relocate.py) are ignored.
    """
    if a.exit != b.exit:
        return f"exit: in place {a.exit} / relocated {b.exit}"
    for name in a.regs:
        if a.regs[name] != b.regs[name]:
            return f"{name}: in place {a.regs[name]:#x} / relocated {b.regs[name]:#x}"
    if (a.flags ^ b.flags) & ~undefined_flags:
        return f"flags: in place {a.flags:#x} / relocated {b.flags:#x}"
    for start, data in a.memory.items():
        other = b.memory[start]
        if data == other:
            continue
        for i, (x, y) in enumerate(zip(data, other)):
            address = start + i
            if x != y and not (start == stack and address < dead_below):
                return f"memory at {address:#x}: in place {x:#04x} / relocated {y:#04x}"
    return None
