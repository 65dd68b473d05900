"""The battery checks itself: known relocation bugs, planted one at a time into a COPY of the
built-in relocator (instrumenter/insn/relocate.py executed again as a new module, then
patched in memory: the real module and files are never touched), must each be caught by the
relocation property within the `ci` budget (30 examples per class and placement, 5 per form).

`kill_table(arches)` runs the battery against each planted copy, stopping at the first
failure, and says how many examples it took.
"""
from __future__ import annotations

import importlib.util
import struct
import sys
from dataclasses import dataclass

from .battery import Tally, relocation_body, relocation_plan, run_cases
from .subjects import relocator_subject


def fresh_relocator():
    """A new module object from relocate.py's source: the copy a bug is planted in."""
    import instrumenter.insn.relocate as real
    name = "instrumenter.insn._planted_relocate"
    spec = importlib.util.spec_from_file_location(name, real.__file__)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module          # dataclasses look their module up while being made
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[name]
    return module


# ---- the bugs: each takes the copy (a module) and plants one -----------------------------
def _disp_off_by_length(m) -> None:
    """RIP-relative displacement computed from the instruction's start, not its end."""
    real = m.displacement_for

    def wrong(insn, at):
        disp = real(insn, at)
        return None if disp is None else disp + insn.length
    m.displacement_for = wrong


def _rel8_not_widened(m) -> None:
    """A short (rel8) Jcc/jmp keeps its 2-byte form in the copy: the displacement is
    recomputed and truncated to 8 bits instead of widened to rel32."""
    jcc, jmp = m._jcc_rel, m._jump_rel

    def short(insn, e, opcode: int):
        rel = (insn.branch_target - (e.here + 2)) & 0xFF
        e.exits.append(m.ExitPoint(e.here, insn.branch_target, "taken"))
        e.raw(bytes((opcode, rel)))

    def jcc_short(insn, e, ok):
        if insn.length != 2:
            return jcc(insn, e, ok)
        short(insn, e, insn.raw[0])
        e.jump(insn.next_address, "fallthrough")
        return "branch", None

    def jmp_short(insn, e, ok):
        if insn.raw[0] != 0xEB:
            return jmp(insn, e, ok)
        short(insn, e, 0xEB)
        return "branch", None
    m._RECIPES[m.InsnClass.JCC_REL] = jcc_short
    m._RECIPES[m.InsnClass.JMP_REL] = jmp_short


def _loop_unconditional(m) -> None:
    """loop/jecxz relocated as if always taken."""
    def taken(insn, e, ok):
        e.jump(insn.branch_target, "taken")
        return "branch", None
    m._RECIPES[m.InsnClass.LOOP_JECXZ] = taken


def _flags_clobbered(m) -> None:
    """The glue moves the stack pointer with sub/add instead of lea, before the relocated
    instruction runs: the Jcc (and a far RIP-relative copy) then read the glue's flags."""
    class FlagClobbering(m.Emitter):
        def lea_sp(self, delta: int) -> None:
            rex = b"\x48" if self.arch == "x86_64" else b""
            self.code += rex + b"\x81\xc4" + struct.pack("<i", delta)     # add sp, imm32
    m.Emitter = FlagClobbering
    jcc = m._jcc_rel

    def behind_a_gap(insn, e, ok):
        e.lea_sp(-m.RED_ZONE)              # a red-zone gap "reserved" before the copy
        e.lea_sp(m.RED_ZONE)
        return jcc(insn, e, ok)
    m._RECIPES[m.InsnClass.JCC_REL] = behind_a_gap


def _stack_operand_after_push(m) -> None:
    """`call [sp+d]`: the return slot is pushed first, then `push [sp+d]` reads the target one
    word off (the stack already moved); on x86-64 also a far RIP-relative instruction using
    rsp is sent through the scratch save instead of refused."""
    def call_indirect(insn, e, ok):
        if insn.rip_relative:
            return real_call(insn, e, ok)
        e.push_word(insn.next_address)
        e.raw(m._as_push(insn))
        e.ret()
        return "call", None
    real_call = m._call_indirect
    m._RECIPES[m.InsnClass.CALL_INDIRECT] = call_indirect
    real_rip = m._rip_relative

    def rip_relative(insn, e, ok):
        if m.displacement_for(insn, e.here) is None and insn.uses("rsp") \
                and insn.base_mnemonic != "jmp":
            scratch = m.choose_scratch(insn)
            e.lea_sp(-m.RED_ZONE)
            e.push_reg(scratch)
            e.mov_reg_imm64(scratch, insn.rip_target)
            e.raw(m.through_scratch(insn.raw, insn, scratch))
            e.pop_reg(scratch)
            e.lea_sp(m.RED_ZONE)
            e.jump(insn.next_address, "fallthrough")
            return "scratch", scratch
        return real_rip(insn, e, ok)
    m._RECIPES[m.InsnClass.RIP_RELATIVE] = rip_relative


def _call_pushes_copy(m) -> None:
    """A relative call copied as a call from the copy: it pushes the copy's return address."""
    def call(insn, e, ok):
        e.push_word(e.address + len(e.code) + 5 + e.jump_len(insn.branch_target))
        e.jump(insn.branch_target, "call")
        return "call", None
    m._RECIPES[m.InsnClass.CALL_REL] = call


def _lock_dropped(m) -> None:
    """The copy drops a LOCK prefix (atomicity lost; one emulated thread sees no other change)."""
    copy, rip = m._copy, m._rip_relative

    def unlocked(recipe):
        def run(insn, e, ok):
            start = len(e.code)
            result = recipe(insn, e, ok)
            if 0xF0 in insn.prefixes:
                at = e.code.index(0xF0, start)
                e.code[at:at + 1] = b"\x3e"      # a ds: prefix keeps the length (and the exits)
            return result
        return run
    m._RECIPES[m.InsnClass.PLAIN] = unlocked(copy)
    m._RECIPES[m.InsnClass.RIP_RELATIVE] = unlocked(rip)


@dataclass(frozen=True)
class Bug:
    name: str
    plant: object
    arches: tuple[str, ...] = ("i386", "x86_64")
    why_not: str = ""                 # why an arch has no such bug


BUGS = (
    Bug("rip-relative disp off by the instruction length", _disp_off_by_length, ("x86_64",),
        "i386 has no RIP-relative addressing"),
    Bug("rel8 branch not widened", _rel8_not_widened),
    Bug("loop/jecxz relocated as unconditional", _loop_unconditional),
    Bug("flags clobbered by the glue before a flag reader", _flags_clobbered),
    Bug("push [sp+d] read after the glue moved the stack", _stack_operand_after_push),
    Bug("call pushes the copy's return address", _call_pushes_copy),
    Bug("lock prefix dropped", _lock_dropped),
)


@dataclass
class KillRow:
    bug: str
    arch: str
    caught: bool = False
    examples: int | None = None        # examples the battery ran when it was caught
    caught_in: str = ""                # the case that caught it, and after how many of its own
    case: str = ""                     # the failure's first line (shrunk)
    not_applicable: str = ""

    def as_json(self) -> dict:
        return {"bug": self.bug, "arch": self.arch, "caught": self.caught,
                "examples": self.examples, "caught_in": self.caught_in, "case": self.case,
                "not_applicable": self.not_applicable}


def planted_relocator(bug: Bug):
    module = fresh_relocator()
    bug.plant(module)
    return module.relocate


def kill_table(arches, *, examples: int = 30, seed: int = 0, progress=None) -> list[KillRow]:
    rows = []
    for bug in BUGS:
        for arch in arches:
            if arch not in bug.arches:
                rows.append(KillRow(bug.name, arch, not_applicable=bug.why_not))
                continue
            subject = relocator_subject(f"planted: {bug.name}", planted_relocator(bug))
            tally = Tally("relocation", subject.name, arch)
            run_cases(tally, relocation_plan(arch, examples), relocation_body(subject), seed=seed)
            rows.append(KillRow(bug.name, arch, bool(tally.failure), tally.caught_at,
                                tally.caught_in,
                                tally.failure[0].replace(f" by {subject.name}", "") if tally.failure
                                else (tally.error or "")))
            if progress is not None:
                progress(tally)
    return rows


def render_kill_table(rows: list[KillRow]) -> str:
    from io import StringIO

    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table
    table = Table(title="trapline check --self-test: planted relocation bugs")
    for column in ("planted bug", "arch", "caught", "examples", "caught by", "shrunk counterexample"):
        table.add_column(column, justify="right" if column == "examples" else "left")
    for r in rows:
        caught = "n/a" if r.not_applicable else ("yes" if r.caught else "NO")
        table.add_row(escape(r.bug), r.arch, caught, "" if r.examples is None else str(r.examples),
                      escape(r.caught_in), escape(r.not_applicable or r.case))
    out = StringIO()
    Console(file=out, width=200, color_system=None).print(table)
    return out.getvalue().rstrip()
