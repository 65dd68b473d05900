"""Probed and unprobed runs end in the same architectural state (docs/ARCHITECTURE.md, Testing).

A random straight-line sequence of instructions, generated from the policy forms (the same
templates as the relocation property), sits at the start of a function; a probe goes on its
first instruction with each strategy — int3 trampoline, jump with a Python action, jump with
the native count (with the site at the function's entry and one instruction in; the count
skips saving the flags where the code after the site overwrites them first) — and the
probed run is compared with the unprobed one from the same registers, flags and memory:
same exit (trap or fault, at the same ORIGINAL address), same registers, same defined flags,
same memory apart from the probe's own (the patched bytes, the XOL and native-data pages,
stack below the red zone for the flag-saving part). The probe must have seen exactly one hit.

The process and kernel are minimal stand-ins: a Machine, a debug interface that maps pages
and keeps breakpoint handlers, and a loop that hands int3 traps to those handlers as the
kernel's #BP gate does (kernel_model/idt_handlers.py).
"""
import random
from dataclasses import replace
from types import SimpleNamespace

import pytest
from hypothesis import assume, event, given
from hypothesis import strategies as st

from emu.exits import FETCH, TRAP
from emu.machine import Machine
from emu.memory import PROT_EXEC, PROT_READ, PROT_WRITE
from instrumenter.insn.emit import RED_ZONE
from instrumenter.errors import InstrumenterError
from instrumenter.strategies.jump import JumpProbes
from instrumenter.strategies.native import NativeSpec
from instrumenter.insn.policy import InsnClass, forms_of
from instrumenter.strategies.trampoline import TrampolineProbes
from kernel_model.debug.cpu import SpaceCpu
from kernel_model.debug.patches import PatchAccess

from .relocation_harness import PAGE, Layout
from .relocation_instances import GPRS, SP, instances, plant_indirect_target

CODE, DATA, STACK, TOOL = 0x0040_0000, 0x0060_0000, 0x0080_0000, 0x0100_0000
TOOL_SPAN = 0x0100_0000          # where _Debug.map_pages puts XOL and native-data pages
BUDGET = 10_000
_STATUS = 0x8D5
SEQUENCE_CLASSES = (InsnClass.PLAIN, InsnClass.RIP_RELATIVE, InsnClass.JCC_REL,
                    InsnClass.JMP_REL, InsnClass.CALL_REL, InsnClass.LOOP_JECXZ, InsnClass.RET)
STRATEGIES = ("trampoline", "jump", "jump+count", "jump+count-inside")
_CMPXCHG8B_16B = frozenset({"cmpxchg8b", "cmpxchg16b"})


# ---- stand-ins for the kernel ------------------------------------------------------------
class _Debug(PatchAccess):
    """The door's own patch table and memory views (kernel_model/debug/patches.py)."""

    def __init__(self):
        self.breakpoints = {}
        self.next_free = TOOL

    def map_pages(self, process, size, perms, *, near=None, name=b""):
        address, self.next_free = self.next_free, self.next_free + size + PAGE
        process.machine.mem.map(address, size, perms)
        return address

    def register_breakpoint(self, space, address, handler):
        self.breakpoints[address] = handler

    def register_breakpoint_redirect(self, space, address, redirect):
        """_run hands every int3 to its handler (the full path): no fast path to set up."""

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


def _process(machine, function):
    vma = SimpleNamespace(perms=PROT_READ | PROT_EXEC, name=b"code")
    areas = SimpleNamespace(vma_at=lambda a: vma if CODE <= a < CODE + PAGE else None)
    return SimpleNamespace(
        pid=1, space=SimpleNamespace(serial=1, machine=machine, vm=areas), machine=machine,
        threads=[], vm=areas,
        # The generated code lies in no ELF object: an image with no segments holds no address,
        # so placement's boundary check leaves it to the decoder (strategies/placement.py).
        image=SimpleNamespace(path="code", symbols=_Symbols(function), segments=[], code_sections={},
                              load_bias=0, bits=machine.arch.bits, entry=0, arch=machine.arch.name))


def _session(debug):
    session = SimpleNamespace(debug=debug, buffers=None,
                              kernel=SimpleNamespace(symbolize=lambda p, a: f"{a:#x}"))
    session.trampolines = TrampolineProbes(session)
    return session


# ---- generation --------------------------------------------------------------------------
@st.composite
def scenarios(draw, arch: str):
    word = 4 if arch == "i386" else 8
    regs = {r: draw(st.integers(0, (1 << (8 * word)) - 1)) for r in GPRS[arch]}
    regs[SP[arch]] = STACK + 0x2000 + draw(st.integers(-0x100, 0x100))
    start = CODE + draw(st.integers(0x40, 0x800))
    layout = Layout(arch, orig=start, xol=TOOL, data=DATA, stack=STACK, regs=regs,
                    flags=draw(st.integers(0, 0xFFF)))
    layout.fill = random.Random(draw(st.integers(0, 2**32 - 1))).randbytes(6 * PAGE)
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


def _machine(layout: Layout, code: bytes) -> Machine:
    m = Machine(layout.arch)
    m.mem.map(CODE, PAGE, PROT_READ | PROT_EXEC)
    m.mem.write(CODE, b"\xcc" * PAGE)
    m.mem.write(layout.orig - 1, b"\x90" + code)     # a nop: the "-inside" variant's function start
    m.mem.map(DATA, 2 * PAGE, PROT_READ | PROT_WRITE)
    m.mem.map(STACK, 4 * PAGE, PROT_READ | PROT_WRITE)
    m.mem.write(DATA, layout.fill[:2 * PAGE])
    m.mem.write(STACK, layout.fill[2 * PAGE:])
    for address, data in layout.writes:
        m.mem.write(address, data)
    for name, value in layout.regs.items():
        m.set_reg(name, value)
    m.set_reg("eflags" if layout.arch == "i386" else "rflags", 0x2 | (layout.flags & (_STATUS | 0x400)))
    return m


# ---- running -----------------------------------------------------------------------------
def _run(m: Machine, start: int, debug: _Debug | None, process=None):
    """Run to the first exit that is not a tool breakpoint (those are handled like the #BP
    gate does: the handler may move the IP; the guest goes on)."""
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


def _probed(layout, insns, code, strategy, hits):
    arch = layout.arch
    start, end = insns[0].address, insns[-1].next_address
    inside = strategy == "jump+count-inside"
    function = SimpleNamespace(name="f", addr=start - 1 if inside else start,
                               size=end - start + 16 + (1 if inside else 0))
    m = _machine(layout, code)
    debug = _Debug()
    session = _session(debug)
    process = _process(m, function)
    hook = SimpleNamespace(native=NativeSpec("count"), probe=None) if "count" in strategy \
        else (lambda thread, address: hits.append(address))
    placer = session.trampolines if strategy == "trampoline" else JumpProbes(session)
    placer.place(process, start, hook, "p")
    outcome = _run(m, start, debug, process)
    if "count" in strategy:
        slot = placer.natives.spaces[process.space.serial].slots[0]
        hits.extend([start] * int.from_bytes(m.mem.read(slot.counter, 8), "little"))
    return outcome


def _difference(a, b, *, undefined: int, ignore: tuple[int, int], dead_below: int):
    exit_a, exit_b = a[0], b[0]
    data_fault = exit_a.kind != TRAP and exit_a.access != FETCH
    if data_fault:       # out of line the faulting copy sits in the XOL page: compare the rest
        exit_b = replace(exit_b, pc=exit_a.pc) if exit_b.kind == exit_a.kind else exit_b
    if exit_a != exit_b:
        return f"exit: unprobed {exit_a} / probed {exit_b}"
    for name, value in a[1].items():
        if value != b[1][name]:
            return f"{name}: unprobed {value:#x} / probed {b[1][name]:#x}"
    # After a data fault in the middle of a translation block the emulator leaves its lazily
    # computed flags stale (the unprobed run, where the faulting instruction shares a block
    # with the ones before it): flags are compared only for clean exits.
    if not data_fault and (a[2] ^ b[2]) & _STATUS & ~undefined:
        return f"flags: unprobed {a[2]:#x} / probed {b[2]:#x}"
    for base, data in a[3].items():
        other = b[3][base]
        for i in (i for i in range(len(data)) if data[i] != other[i]):
            address = base + i
            if ignore[0] <= address < ignore[1] or (base == STACK and address < dead_below):
                continue
            return f"memory at {address:#x}: unprobed {data[i]:#04x} / probed {other[i]:#04x}"
    return None


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
@pytest.mark.parametrize("strategy", STRATEGIES)
@given(data=st.data())
def test_a_probed_sequence_ends_like_the_unprobed_one(data, arch, strategy):
    layout, insns = data.draw(scenarios(arch), label="scenario")
    start, end = insns[0].address, insns[-1].next_address
    if any(i.branch_target is not None and start - 1 <= i.branch_target < end for i in insns):
        event("skipped: a branch back into the sequence (would loop)")
        assume(False)
    if any(i.branch_target is not None and TOOL <= i.branch_target < TOOL + TOOL_SPAN
           for i in insns):
        # Unmapped in the unprobed run, the tool's XOL/data pages in the probed one: a jump
        # there is a jump into memory the program does not own (found by the thorough profile)
        event("skipped: a branch into the tool's pages")
        assume(False)
    code = b"".join(i.raw for i in insns)
    unprobed = _run(_machine(layout, code), start, None)
    hits: list[int] = []
    try:
        probed = _probed(layout, insns, code, strategy, hits)
    except InstrumenterError as refused:
        assert strategy != "trampoline", str(refused)
        event(f"{strategy} refused: {str(refused).split(':')[-1].strip()[:40]}")
        # Not a pass: hypothesis counts it as filtered, and fails the test (filter_too_much,
        # Unsatisfiable) if a strategy refuses most sites, so the property cannot hold vacuously.
        assume(False)
    event(f"{arch} {strategy}: {len(insns)} instructions")
    undefined = 0
    for insn in insns:
        undefined |= insn.flags_undefined
    if any(i.base_mnemonic in _CMPXCHG8B_16B for i in insns[1:]):
        # Unicorn's erratum (emu/errata.py): after another flag-setting instruction in the
        # same block, and under the budget's code hook, cmpxchg8b/16b compute the flags they
        # must keep from a stale cc_op; the unprobed run is the wrong one. ZF stays compared.
        event("flags but ZF not compared: cmpxchg8b/16b erratum")
        undefined |= _STATUS & ~0x40
    # The flag-saving count part pushes below the red zone, which the ABI does not preserve.
    dead_below = layout.regs[SP[arch]] - RED_ZONE if "count" in strategy else STACK
    patched = (start, end if strategy != "trampoline" else start + 1)
    listing = "; ".join(str(i) for i in insns)
    diff = _difference(unprobed, probed, undefined=undefined, ignore=patched, dead_below=dead_below)
    assert diff is None, f"{strategy} on [{listing}]: {diff}"
    assert hits == [start], f"{strategy} on [{listing}]: hits {hits}"
