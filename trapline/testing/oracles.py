"""The oracles: what "behaves like the original" means, checked on the emulator.

Relocated vs original, one instruction (`check_relocation`): the original runs in place and
its relocated copy out of line, on two Machines with the SAME pages, contents, registers and
flags (layouts.py); each runs until control leaves the instruction — an int3 of the filler
(a trap, pc after it) or a fetch from an address not mapped or not executable (a fault) — and
the whole architectural state must agree: the exit (kind, ORIGINAL address, faulting data
address), every general-purpose register, the flags the Intel SDM defines after that
instruction (capstone's undefined-flag bits per instruction, completed from the SDM where
capstone has gaps: SDM_UNDEFINED, are masked), every byte of
memory the program may rely on (stack below what the ABI preserves is not compared), and the
atomic operations: an instruction with a LOCK prefix must run locked in the copy too (the
LOCK# signal, SDM Vol. 3A, 9.1.2; a single emulated thread cannot see its loss otherwise).

Probed vs unprobed, a program (`program_difference`): the same comparison for whole runs
(probes.py runs them), with the probe's own memory (patched bytes, tool pages) left out.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from emu.exits import FETCH, TRAP, Exit
from emu.machine import Machine
from emu.memory import MemoryAccessError
from instrumenter.errors import DecodeError, InstrumenterError
from instrumenter.insn.decode import LOCK, Insn, decode
from instrumenter.insn.emit import RED_ZONE
from instrumenter.insn.policy import InsnClass, classify

from .layouts import SP, STATUS_FLAGS, Layout, machine_for

BUDGET = 10_000          # a safety net only: every scenario ends in a trap or a fault long before
FLAG_NAMES = ((0x001, "CF"), (0x004, "PF"), (0x010, "AF"), (0x040, "ZF"), (0x080, "SF"),
              (0x400, "DF"), (0x800, "OF"))


# Flags the Intel SDM leaves undefined that capstone's tables give as defined (the host oracle
# found them: the processor and Unicorn differ there, both within the SDM). IMUL: "SF, ZF, AF
# and PF flags are undefined" (SDM Vol. 2A, IMUL, Flags Affected); capstone marks SF modified.
SDM_UNDEFINED = {"imul": 0x080}


def undefined_flags(insn: Insn) -> int:
    """The flags the SDM leaves undefined after `insn`: capstone's, and SDM_UNDEFINED's."""
    return insn.flags_undefined | SDM_UNDEFINED.get(insn.base_mnemonic, 0)


@dataclass(frozen=True)
class Outcome:
    exit: Exit
    regs: dict[str, int]
    flags: int
    memory: dict[int, bytes]


@dataclass(frozen=True)
class Difference:
    """The first difference of two runs: `what` is "exit", "register", "flags", "memory" or
    "atomicity"; `where` the register, flag or address; the two values as text."""
    what: str
    where: str
    original: str
    other: str
    labels: tuple[str, str] = ("in place", "relocated")

    def __str__(self) -> str:
        first, second = self.labels
        return f"{self.where}: {first} {self.original} / {second} {self.other}"


def run_outcome(m: Machine, start: int, regions) -> Outcome:
    exit_ = m.run(start, count=BUDGET)
    regs = m.registers()
    memory = {s: m.mem.read(s, n) for s, n, *_ in regions}
    return Outcome(exit_, dict(regs.gpr), regs.flags, memory)


def exit_text(e: Exit) -> str:
    """An exit as a reader says it: "trap 3 at 0x401005", "fault (write 0x7000) at 0x401000"."""
    if e.kind == "fault":
        return f"fault ({e.access} {e.address:#x}{'' if e.unmapped else ', protection'}) at {e.pc:#x}"
    if e.kind == "trap":
        return f"trap {e.vector} at {e.pc:#x}"
    return f"{e.kind} at {e.pc:#x}"


def flag_names(bits: int) -> str:
    return " ".join(name for bit, name in FLAG_NAMES if bits & bit) or "-"


def first_difference(a: Outcome, b: Outcome, *, undefined_flags: int, stack: int,
                     dead_below: int, labels=("in place", "relocated")) -> Difference | None:
    """None when the two outcomes agree; else the first difference. Flags the SDM leaves
    undefined are masked; stack bytes below `dead_below` (memory the ABI does not preserve:
    instrumenter/insn/relocate.py) are not compared."""
    if a.exit != b.exit:
        return Difference("exit", "exit", exit_text(a.exit), exit_text(b.exit), labels)
    for name in a.regs:
        if a.regs[name] != b.regs[name]:
            return Difference("register", name, f"{a.regs[name]:#x}", f"{b.regs[name]:#x}", labels)
    differing = (a.flags ^ b.flags) & ~undefined_flags & (STATUS_FLAGS | 0x400)
    if differing:
        return Difference("flags", f"flags ({flag_names(differing)})", f"{a.flags:#x}",
                          f"{b.flags:#x}", labels)
    for start, data in a.memory.items():
        other = b.memory[start]
        if data == other:
            continue
        for i, (x, y) in enumerate(zip(data, other)):
            address = start + i
            if x != y and not (start == stack and address < dead_below):
                return Difference("memory", f"memory at {address:#x}", f"{x:#04x}", f"{y:#04x}",
                                  labels)
    return None


def locked_operations(m: Machine, start: int, arch: str, limit: int = 64) -> list[str]:
    """The LOCK-prefixed instructions a run from `start` executes, stepped one at a time
    (the run must have ended after `limit` steps: a relocated instruction is a few)."""
    found, pc = [], start
    for _ in range(limit):
        try:
            insn = decode(_readable(m, pc), pc, arch)
        except DecodeError:           # not an instruction there: the step below faults or traps
            insn = None
        exit_ = m.run(pc, count=1)
        if insn is not None and LOCK in insn.prefixes:
            found.append(insn.base_mnemonic)
        if exit_.kind != "budget":
            return found
        pc = exit_.pc
    return found


def _readable(m: Machine, pc: int) -> bytes:
    """Up to 15 bytes at pc, fewer at the end of mapped memory (none where nothing is)."""
    for size in (15, (-pc) % 0x1000 or 0x1000):
        try:
            return m.mem.read(pc, min(size, 15))
        except MemoryAccessError:
            continue
    return b""


@dataclass
class RelocationCase:
    """One instruction at one layout: what the relocation oracle checks. Its repr is Python
    (`@example(case=RelocationCase(...))`)."""
    placement: str
    cls: str                     # the policy class's name (InsnClass value)
    code: bytes
    layout: Layout

    @property
    def arch(self) -> str:
        return self.layout.arch

    @property
    def insn(self) -> Insn:
        return decode(self.code, self.layout.orig, self.arch)

    def __repr__(self) -> str:
        return (f"RelocationCase({self.placement!r}, {self.cls!r}, "
                f"bytes.fromhex({self.code.hex()!r}), {self.layout!r})")


@dataclass
class Verdict:
    """What `check_relocation` found: status "passed", "refused" (the relocator raised
    InstrumenterError: `reason`), "skipped" (an instance the oracle cannot judge: `reason`) or
    "failed" (`difference`). `relocated` is the relocator's result where there is one."""
    status: str
    reason: str = ""
    relocated: object = None
    difference: Difference | None = None


def check_relocation(case: RelocationCase, relocator) -> Verdict:
    """Run `case` in place and relocated by `relocator(insn, new_address, arch)` (an object
    with `.code` and optionally `.scratch`, as instrumenter/insn/relocate.py's Relocated);
    compare the two ends. The relocator's own exceptions other than InstrumenterError
    propagate: they are the relocator's bugs."""
    insn, layout, arch = case.insn, case.layout, case.arch
    if insn.branch_target is not None and 0 <= insn.branch_target - insn.address < len(insn.raw):
        # To itself, or into its own bytes (`67 e2 fe`: addr16 loop into `e2 fe`, a loop to
        # itself): a loop of up to 2^32 iterations, which both runs would cut at the budget,
        # one jump apart.
        return Verdict("skipped", "a branch into the instruction itself")
    try:
        relocated = relocator(insn, layout.xol, arch)
    except InstrumenterError as refusal:
        return Verdict("refused", str(refusal))
    original = run_outcome(machine_for(layout, insn.raw, relocated.code), layout.orig, layout.regions)
    moved = run_outcome(machine_for(layout, insn.raw, relocated.code), layout.xol, layout.regions)
    diff = first_difference(original, moved, undefined_flags=undefined_flags(insn),
                            stack=layout.stack, dead_below=dead_below(insn, relocated, original))
    if diff is None and LOCK in insn.prefixes:
        diff = _atomicity(insn, layout, relocated.code)
    return Verdict("failed" if diff else "passed", relocated=relocated, difference=diff)


def dead_below(insn: Insn, relocated, original: Outcome) -> int:
    """Stack below this address is not compared: memory the ABI does not preserve."""
    sp = original.regs[SP[insn.arch]]
    if classify(insn).cls is InsnClass.CALL_INDIRECT:
        return sp                           # nothing below a callee's entry sp is live
    if getattr(relocated, "scratch", None) is not None:
        return sp - RED_ZONE                # the scratch save sits below the red zone
    return 0


def _atomicity(insn: Insn, layout: Layout, code: bytes) -> Difference | None:
    m = machine_for(layout, insn.raw, code)
    locked = locked_operations(m, layout.xol, layout.arch)
    if insn.base_mnemonic in locked:
        return None
    return Difference("atomicity", "locked operations", f"[lock {insn.base_mnemonic}]",
                      f"[{', '.join('lock ' + m for m in locked)}]")


def program_difference(a, b, *, undefined: int, ignore: tuple[int, int], stack: int,
                       dead_below: int) -> Difference | None:
    """Probed (`b`) vs unprobed (`a`) ends of a program, each (exit, regs, flags, memory):
    None when they agree. Bytes in `ignore` (the patched site) and stack below `dead_below`
    are not compared; after a data fault the exit pc and the flags are not either (below)."""
    labels = ("unprobed", "probed")
    exit_a, exit_b = a[0], b[0]
    data_fault = exit_a.kind != TRAP and exit_a.access != FETCH
    if data_fault:       # out of line the faulting copy sits in the XOL page: compare the rest
        exit_b = replace(exit_b, pc=exit_a.pc) if exit_b.kind == exit_a.kind else exit_b
    if exit_a != exit_b:
        return Difference("exit", "exit", exit_text(exit_a), exit_text(exit_b), labels)
    for name, value in a[1].items():
        if value != b[1][name]:
            return Difference("register", name, f"{value:#x}", f"{b[1][name]:#x}", labels)
    # After a data fault in the middle of a translation block the emulator leaves its lazily
    # computed flags stale (the unprobed run, where the faulting instruction shares a block
    # with the ones before it): flags are compared only for clean exits.
    differing = (a[2] ^ b[2]) & STATUS_FLAGS & ~undefined
    if not data_fault and differing:
        return Difference("flags", f"flags ({flag_names(differing)})", f"{a[2]:#x}", f"{b[2]:#x}",
                          labels)
    for base, data in a[3].items():
        other = b[3][base]
        for i in (i for i in range(len(data)) if data[i] != other[i]):
            address = base + i
            if ignore[0] <= address < ignore[1] or (base == stack and address < dead_below):
                continue
            return Difference("memory", f"memory at {address:#x}", f"{data[i]:#04x}",
                              f"{other[i]:#04x}", labels)
    return None
