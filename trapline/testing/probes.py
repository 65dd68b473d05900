"""Probed programs: a straight-line sequence of generated instructions, probed on its first
instruction by a strategy, run against the same sequence unprobed (oracles.program_difference).

The process and kernel are minimal stand-ins: a Machine, a debug interface that maps pages
and keeps breakpoint handlers (the door's own patch table: kernel_model/debug/patches.py), and
a loop that hands int3 traps to those handlers as the kernel's #BP gate does
(kernel_model/idt_handlers.py). A strategy is given a session with `debug`, `kernel`,
`buffers` and `trampolines` (the trampoline strategy, whose XOL pages the jump strategy
shares): a ProbeStrategy (instrumenter/strategies/base.py) that reaches the kernel only
through those is checked here as in a real run.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, replace
from types import SimpleNamespace

from hypothesis import strategies as st

from emu.exits import TRAP
from emu.machine import Machine
from emu.memory import PROT_EXEC, PROT_READ, PROT_WRITE
from instrumenter.insn.decode import Insn
from instrumenter.insn.emit import RED_ZONE
from instrumenter.insn.policy import InsnClass, forms_of
from kernel_model.debug.cpu import SpaceCpu
from kernel_model.debug.patches import PatchAccess

from .instructions import instances, plant_indirect_target
from .layouts import GPRS, LOADED_FLAGS, PAGE, SP, STATUS_FLAGS, Layout
from .oracles import BUDGET, Difference, program_difference, undefined_flags

CODE, DATA, STACK, TOOL = 0x0040_0000, 0x0060_0000, 0x0080_0000, 0x0100_0000
TOOL_SPAN = 0x0100_0000          # where ToyDebug.map_pages puts XOL and native-data pages
SEQUENCE_CLASSES = (InsnClass.PLAIN, InsnClass.RIP_RELATIVE, InsnClass.JCC_REL,
                    InsnClass.JMP_REL, InsnClass.CALL_REL, InsnClass.LOOP_JECXZ, InsnClass.RET)
_CMPXCHG8B_16B = frozenset({"cmpxchg8b", "cmpxchg16b"})


# ---- stand-ins for the kernel ------------------------------------------------------------
class ToyDebug(PatchAccess):
    """The door's own patch table and memory views (kernel_model/debug/patches.py)."""

    def __init__(self):
        self.breakpoints = {}
        self.next_free = TOOL
        self.mapped: list[tuple[int, int, int]] = []       # (address, size, perms): the tool's

    def map_pages(self, process, size, perms, *, near=None, name=b""):
        address, self.next_free = self.next_free, self.next_free + size + PAGE
        process.machine.mem.map(address, size, perms)
        self.mapped.append((address, size, perms))
        return address

    def register_breakpoint(self, space, address, handler):
        self.breakpoints[address] = handler

    def register_breakpoint_redirect(self, space, address, redirect):
        """run_probed hands every int3 to its handler (the full path): no fast path."""

    def register_breakpoint_trampoline(self, space, address, site):
        """The door's resolved redirect of a trampoline site: no fast path either."""

    @staticmethod
    def symbolize(process, address):
        return f"{address:#x}"

    @staticmethod
    def live_threads(process):
        return process.threads          # none: only the Machine's own registers run

    @staticmethod
    def arch(process):
        return process.space.machine.arch

    @staticmethod
    def area_at(process, address):
        return process.space.vm.vma_at(address)

    @staticmethod
    def cpu(process):
        return SpaceCpu(process.space)


class _Symbols:
    def __init__(self, function):
        self.function = function

    def function_at(self, address):
        f = self.function
        return f if f.addr <= address < f.addr + f.size else None


def toy_process(machine: Machine, function):
    vma = SimpleNamespace(perms=PROT_READ | PROT_EXEC, name=b"code")
    areas = SimpleNamespace(vma_at=lambda a: vma if CODE <= a < CODE + PAGE else None)
    return SimpleNamespace(
        pid=1, space=SimpleNamespace(serial=1, machine=machine, vm=areas), machine=machine,
        threads=[], vm=areas,
        # The generated code lies in no ELF object: an image with no segments holds no address,
        # so placement's boundary check leaves it to the decoder (strategies/placement.py).
        image=SimpleNamespace(path="code", symbols=_Symbols(function), segments=[], code_sections={},
                              load_bias=0, bits=machine.arch.bits, entry=0, arch=machine.arch.name))


def toy_session(debug: ToyDebug):
    from instrumenter.strategies.trampoline import TrampolineProbes
    session = SimpleNamespace(debug=debug, buffers=None,
                              kernel=SimpleNamespace(symbolize=lambda p, a: f"{a:#x}"))
    session.trampolines = TrampolineProbes(session)
    return session


# ---- generation --------------------------------------------------------------------------
@st.composite
def scenarios(draw, arch: str) -> tuple[Layout, list[Insn]]:
    """A layout and 1..5 instructions (at least 5 bytes: a jump fits over them) at layout.orig,
    of the classes a straight line can hold."""
    word = 4 if arch == "i386" else 8
    regs = {r: draw(st.integers(0, (1 << (8 * word)) - 1)) for r in GPRS[arch]}
    regs[SP[arch]] = STACK + 0x2000 + draw(st.integers(-0x100, 0x100))
    start = CODE + draw(st.integers(0x40, 0x800))
    layout = Layout(arch, orig=start, xol=TOOL, data=DATA, stack=STACK, regs=regs,
                    flags=draw(st.integers(0, 0xFFF)))
    layout.fill_seed = draw(st.integers(0, 2**32 - 1))
    insns, address = [], start
    while sum(i.length for i in insns) < 5 or (len(insns) < 5 and draw(st.booleans())):
        cls = draw(st.sampled_from([c for c in SEQUENCE_CLASSES if forms_of(c, arch)]))
        form = draw(st.sampled_from(forms_of(cls, arch)))
        insn = draw(instances(form, arch, replace(layout, orig=address)))
        if cls is InsnClass.RET:
            plant_indirect_target(draw, insn, cls, layout)
        insns.append(insn)
        address = insn.next_address
    return layout, insns


def sequence_machine(layout: Layout, code: bytes) -> Machine:
    m = Machine(layout.arch)
    m.mem.map(CODE, PAGE, PROT_READ | PROT_EXEC)
    m.mem.write(CODE, b"\xcc" * PAGE)
    m.mem.write(layout.orig - 1, b"\x90" + code)     # a nop: the "-inside" variant's function start
    m.mem.map(DATA, 2 * PAGE, PROT_READ | PROT_WRITE)
    m.mem.map(STACK, 4 * PAGE, PROT_READ | PROT_WRITE)
    fill = layout.fill
    m.mem.write(DATA, fill[:2 * PAGE])
    m.mem.write(STACK, fill[2 * PAGE:])
    for address, data in layout.writes:
        m.mem.write(address, data)
    for name, value in layout.regs.items():
        m.set_reg(name, value)
    m.set_reg("eflags" if layout.arch == "i386" else "rflags", 0x2 | (layout.flags & LOADED_FLAGS))
    return m


@dataclass
class ProbedCase:
    """A scenario as plain data (its repr is Python, for an `@example(...)` line): the layout
    and the sequence's bytes at layout.orig."""
    layout: Layout
    code: bytes

    def __init__(self, layout: Layout, insns_or_code):
        self.layout = layout
        self.code = insns_or_code if isinstance(insns_or_code, bytes) else \
            b"".join(i.raw for i in insns_or_code)

    @property
    def insns(self) -> list[Insn]:
        from instrumenter.insn.decode import decode
        insns, offset = [], 0
        while offset < len(self.code):
            insn = decode(self.code[offset:offset + 15], self.layout.orig + offset, self.layout.arch)
            insns.append(insn)
            offset += insn.length
        return insns

    def __repr__(self) -> str:
        return f"ProbedCase({self.layout!r}, bytes.fromhex({self.code.hex()!r}))"


# ---- running -----------------------------------------------------------------------------
def run_sequence(m: Machine, start: int, debug: ToyDebug | None = None, process=None):
    """Run to the first exit that is not a tool breakpoint (those are handled as the #BP
    gate does: the handler may move the IP; the guest goes on) -> (exit, regs, flags, memory)."""
    pc = start
    for _ in range(100):
        exit_ = m.run(pc, count=BUDGET)
        handler = debug.breakpoints.get(exit_.pc - 1) if debug and exit_.kind == TRAP else None
        if handler is None:
            regs = m.registers()
            memory = {s: m.mem.read(s, n) for s, n in ((CODE, PAGE), (DATA, 2 * PAGE), (STACK, 4 * PAGE))}
            return exit_, dict(regs.gpr), regs.flags, memory
        frame = SimpleNamespace(ip=exit_.pc)
        handler(frame, SimpleNamespace(process=process, tid=1))
        pc = frame.ip
    raise AssertionError("more than 100 breakpoint hits in one run")


@dataclass(frozen=True)
class Placing:
    """How the probe goes on: `placer(session)` gives the strategy object; `native`: the
    probe's action is the in-guest count (instrumenter/strategies/native.py) instead of a
    Python hook; `inside`: the site is one instruction into its function (a nop before it)."""
    placer: object
    native: bool = False
    inside: bool = False
    patched_bytes: int | None = None     # bytes the site patches (None: the whole sequence)


def builtin_placing(name: str) -> Placing:
    """The project's variants: trampoline, jump, jump+count, jump+count-inside."""
    from instrumenter.strategies.jump import JumpProbes
    if name == "trampoline":
        return Placing(lambda s: s.trampolines, patched_bytes=1)
    base, _, count = name.partition("+")
    if base != "jump":
        raise ValueError(f"no built-in probed-sequence variant {name!r}")
    return Placing(JumpProbes, native=bool(count), inside=count == "count-inside")


def run_probed(layout: Layout, insns: list[Insn], code: bytes, placing: Placing, hits: list,
               listing: list | None = None):
    """The sequence run with a probe on its first instruction; each hit's address goes into
    `hits` (a native count is read from its counter after the run), and into `listing` the
    strategy's code as placed: the patched sequence and its executable tool pages."""
    from instrumenter.strategies.native import NativeSpec
    start, end = insns[0].address, insns[-1].next_address
    function = SimpleNamespace(name="f", addr=start - 1 if placing.inside else start,
                               size=end - start + 16 + (1 if placing.inside else 0))
    m = sequence_machine(layout, code)
    debug = ToyDebug()
    session = toy_session(debug)
    process = toy_process(m, function)
    hook = SimpleNamespace(native=NativeSpec("count"), probe=None) if placing.native \
        else (lambda thread, address: hits.append(address))
    placer = placing.placer(session)
    placer.place(process, start, hook, "p")
    if listing is not None:
        listing += _placed_code(m, debug, start, len(code), layout.arch)
    outcome = run_sequence(m, start, debug, process)
    if placing.native:
        slot = placer.natives.spaces[process.space.serial].slots[0]
        hits.extend([start] * int.from_bytes(m.mem.read(slot.counter, 8), "little"))
    return outcome


def _placed_code(m: Machine, debug: ToyDebug, start: int, length: int, arch: str) -> list[str]:
    """The patched sequence and the tool's executable pages (up to their trailing filler)."""
    from .listing import listing
    lines = ["probed sequence:", *(f"  {line}" for line in listing(m.mem.read(start, length),
                                                                   start, arch))]
    for address, size, perms in debug.mapped:
        if not perms & PROT_EXEC:
            continue
        data = m.mem.read(address, size).rstrip(b"\0").rstrip(b"\xcc")
        lines.append(f"tool page {address:#x}:")
        lines += [f"  {line}" for line in listing(data, address, arch)]
    return lines


def unjudgeable(insns: list[Insn]) -> str | None:
    """Why the oracle cannot judge this sequence, or None."""
    start, end = insns[0].address, insns[-1].next_address
    if any(i.branch_target is not None and start - 1 <= i.branch_target < end for i in insns):
        return "a branch back into the sequence (would loop)"
    if any(i.branch_target is not None and TOOL <= i.branch_target < TOOL + TOOL_SPAN
           for i in insns):
        # Unmapped in the unprobed run, the tool's XOL/data pages in the probed one: a jump
        # there is a jump into memory the program does not own (found by the thorough profile)
        return "a branch into the tool's pages"
    return None


def sequence_difference(layout: Layout, insns: list[Insn], placing: Placing,
                        listing: list | None = None) -> tuple[Difference | None, list]:
    """Run the sequence unprobed and probed; (the first difference or None, the hits seen);
    `listing` gets the strategy's placed code. InstrumenterError from placing propagates
    (a refusal)."""
    code = b"".join(i.raw for i in insns)
    start, end = insns[0].address, insns[-1].next_address
    unprobed = run_sequence(sequence_machine(layout, code), start)
    hits: list[int] = []
    probed = run_probed(layout, insns, code, placing, hits, listing)
    undefined = 0
    for insn in insns:
        undefined |= undefined_flags(insn)
    if any(i.base_mnemonic in _CMPXCHG8B_16B for i in insns[1:]):
        # Unicorn's erratum (emu/errata.py): after another flag-setting instruction in the
        # same block, and under the budget's code hook, cmpxchg8b/16b compute the flags they
        # must keep from a stale cc_op; the unprobed run is the wrong one. ZF stays compared.
        undefined |= STATUS_FLAGS & ~0x40
    # The flag-saving count part pushes below the red zone, which the ABI does not preserve.
    dead_below = layout.regs[SP[layout.arch]] - RED_ZONE if placing.native else STACK
    patched = (start, end if placing.patched_bytes is None else start + placing.patched_bytes)
    diff = program_difference(unprobed, probed, undefined=undefined, ignore=patched,
                              stack=STACK, dead_below=dead_below)
    return diff, hits
