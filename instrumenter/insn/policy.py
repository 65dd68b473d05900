"""Opcode policy: which class an instruction belongs to, and why — as data.

Modelled on Linux's arch/x86/kernel/uprobes.c, where the decision "can this instruction run
out of line, and how" is a set of opcode tables plus a few prefix checks, decided once when the
probe is placed. Here every entry carries the reason a reader (or a refused probe's error
message) needs, the strategies that could take a refused instruction instead, and the operand
forms from which the property tests generate instances of the class (tests/property/
test_relocation.py builds its hypothesis strategies from `RULES`, so a class added here is
tested without touching the test).

Classification order: prefix/encoding refusals first (they hold whatever the mnemonic), then
the mnemonic rules in table order, then RIP-relative, then PLAIN (position-independent: any
instruction not named here only depends on registers and memory, never on where it sits).
"""
from dataclasses import dataclass
from enum import Enum

from .decode import ARCHES, LOCK, Insn
from .forms import (CALL_INDIRECT_FORMS, CALL_REL_FORMS, JCC_FORMS, JMP_INDIRECT_FORMS,
                    JMP_REL_FORMS, LOOP_FORMS, PLAIN_FORMS, RET_FORMS, RIP_RELATIVE_FORMS, Form)


class InsnClass(str, Enum):
    PLAIN = "plain"                  # position-independent: a copy behaves the same anywhere
    RIP_RELATIVE = "rip_relative"    # x86-64 [rip + disp32] operand: new disp or scratch reg
    JMP_REL = "jmp_rel"              # jmp rel8/rel32
    JCC_REL = "jcc_rel"              # jcc rel8/rel32
    LOOP_JECXZ = "loop_jecxz"        # loop/loope/loopne/jecxz/jrcxz rel8: no rel32 form
    CALL_REL = "call_rel"            # call rel32 (call $+5: the i386 get-pc idiom)
    CALL_INDIRECT = "call_indirect"  # call through a register or memory (RIP-relative too)
    JMP_INDIRECT = "jmp_indirect"    # jmp through a register or memory (RIP-relative too)
    RET = "ret"                      # ret / ret imm16: pops its target, position-independent
    REFUSED = "refused"


RELOCATABLE = frozenset(c for c in InsnClass if c is not InsnClass.REFUSED)


@dataclass(frozen=True)
class Rule:
    name: str
    cls: InsnClass
    reason: str
    mnemonics: frozenset[str] = frozenset()   # capstone base mnemonics; empty: `when` decides
    when: str | None = None                   # name of a predicate in _PREDICATES
    alternatives: tuple[str, ...] = ()        # strategies that could take a refused insn
    forms: tuple[Form, ...] = ()              # generator templates (tests)


@dataclass(frozen=True)
class Classification:
    cls: InsnClass
    rule: Rule

    @property
    def reason(self) -> str:
        return self.rule.reason

    @property
    def alternatives(self) -> tuple[str, ...]:
        return self.rule.alternatives


def _is_far_indirect(insn: Insn) -> bool:
    # FF /3 and FF /5 are far call/jmp through memory (SDM Vol. 2A CALL, JMP); capstone names
    # them plain "call"/"jmp", so the ModRM reg field decides.
    return (insn.opcode == b"\xff" and insn.modrm is not None
            and (insn.modrm >> 3) & 7 in (3, 5))


def _lock_without_memory_destination(insn: Insn) -> bool:
    if LOCK not in insn.prefixes:
        return False
    return not any(op.kind == "mem" and "w" in op.access for op in insn.operands) \
        and insn.base_mnemonic not in ("cmpxchg", "cmpxchg8b", "cmpxchg16b")


def _loads_ss(insn: Insn) -> bool:
    return insn.base_mnemonic in ("mov", "pop") and any(
        op.kind == "reg" and op.reg == "ss" and "w" in op.access for op in insn.operands)


def _operand_size_branch(insn: Insn) -> bool:
    return 0x66 in insn.prefixes and bool(insn.groups & {"jump", "call", "ret"})


def _rip_with_address_size(insn: Insn) -> bool:
    return insn.rip_relative and 0x67 in insn.prefixes


def _privileged(insn: Insn) -> bool:
    return "privilege" in insn.groups


def _relative(insn: Insn) -> bool:
    return insn.branch_target is not None


def _indirect(insn: Insn) -> bool:
    return insn.branch_target is None


_PREDICATES = {
    "far_indirect": _is_far_indirect, "lock_without_memory_destination":
    _lock_without_memory_destination, "loads_ss": _loads_ss,
    "operand_size_branch": _operand_size_branch, "rip_with_address_size": _rip_with_address_size,
    "privileged": _privileged, "relative": _relative, "indirect": _indirect,
    "rip_relative": lambda insn: insn.rip_relative, "always": lambda insn: True,
}

_R = InsnClass.REFUSED
_SS = ("singlestep",)       # executing the original in place: faults report the right address

# Encoding-level refusals, checked before any mnemonic.
_PREFIX_RULES = (
    Rule("lock_register", _R, "LOCK prefix without a memory destination raises #UD (SDM Vol. "
         "2A, LOCK); out of line the fault would report the XOL address, not the original",
         when="lock_without_memory_destination", alternatives=_SS),
    Rule("operand_size_branch", _R, "operand-size prefix on a branch truncates the IP to 16 "
         "bits (i386) and is vendor-dependent in 64-bit mode (SDM Vol. 2A, JMP/CALL/RET)",
         when="operand_size_branch", alternatives=_SS),
    Rule("rip_address_size", _R, "address-size prefix makes the RIP-relative address EIP+disp "
         "truncated to 32 bits, which cannot be re-targeted from another page",
         when="rip_with_address_size", alternatives=_SS),
    Rule("far_indirect", _R, "far call/jmp through memory loads CS:IP; the jump back of a "
         "trampoline assumes the code segment never changes", when="far_indirect",
         alternatives=_SS),
    Rule("ss_load", _R, "loading SS blocks interrupts and debug traps until after the NEXT "
         "instruction (SDM Vol. 3A, 6.8.3); out of line that is the trampoline's jump back",
         when="loads_ss"),
)

RULES: tuple[Rule, ...] = _PREFIX_RULES + (
    Rule("breakpoint", _R, "int3 is the breakpoint instruction itself: a probe on it would "
         "nest breakpoints (uprobes refuses it too)", frozenset({"int3"})),
    Rule("software_interrupt", _R, "INT n/INTO/INT1 save the address of the next instruction "
         "(SDM Vol. 3A, 6.5); out of line the kernel would see and restart at the XOL copy",
         frozenset({"int", "into", "int1"}), alternatives=_SS),
    Rule("fast_syscall", _R, "syscall saves the return RIP in RCX and a restarted syscall "
         "backs the IP up by 2 (Linux -ERESTART*); sysenter returns to a fixed vDSO address: "
         "neither comes back through the trampoline's jump", frozenset({"syscall", "sysenter"}),
         alternatives=_SS),
    Rule("undefined_opcode", _R, "raises #UD by definition; the fault must report the original "
         "address", frozenset({"ud0", "ud1", "ud2"}), alternatives=_SS),
    Rule("far_transfer", _R, "far call/jmp/return and iret load CS; the trampoline assumes the "
         "code segment never changes", frozenset({"lcall", "ljmp", "retf", "iret", "iretd",
                                                  "iretq", "sysexit", "sysret"}),
         alternatives=_SS),
    Rule("io_and_msr", _R, "port I/O and MSR access fault with #GP at CPL 3 (SDM Vol. 1, "
         "18.3); the fault must report the original address",
         frozenset({"in", "out", "insb", "insw", "insd", "outsb", "outsw", "outsd", "rdmsr",
                    "wrmsr"}), alternatives=_SS),
    Rule("privileged", _R, "privileged instruction: #GP at CPL 3, reported at the XOL address "
         "if run out of line", when="privileged", alternatives=_SS),
    Rule("transaction_begin", _R, "xbegin's abort resumes at a relative fallback address that "
         "depends on where the instruction sits", frozenset({"xbegin"}), alternatives=_SS),
    Rule("bound_check", _R, "bound raises #BR for an out-of-range index; the fault must report "
         "the original address", frozenset({"bound"}), alternatives=_SS),
    Rule("jcc_rel", InsnClass.JCC_REL, "relative conditional branch: both outcomes must return "
         "to original code: jcc rel32 to the target, then jmp to the fall-through",
         frozenset({"jo", "jno", "jb", "jae", "je", "jne", "jbe", "ja", "js", "jns", "jp",
                    "jnp", "jl", "jge", "jle", "jg"}), forms=JCC_FORMS),
    Rule("loop_jecxz", InsnClass.LOOP_JECXZ, "counter branch with only a rel8 form: branch over "
         "a jump to the fall-through into a jump to the target",
         frozenset({"loop", "loope", "loopne", "jecxz", "jrcxz", "jcxz"}), forms=LOOP_FORMS),
    Rule("jmp_rel", InsnClass.JMP_REL, "relative jump: re-encoded as a jump to the same absolute "
         "target", frozenset({"jmp"}), when="relative", forms=JMP_REL_FORMS),
    Rule("call_rel", InsnClass.CALL_REL, "relative call: push the ORIGINAL return address, then "
         "jump to the target, so the callee never sees a trampoline address",
         frozenset({"call"}), when="relative", forms=CALL_REL_FORMS),
    Rule("call_indirect", InsnClass.CALL_INDIRECT, "indirect call: push the target read from the "
         "ORIGINAL operand (before the stack moves), store the original return address, ret",
         frozenset({"call"}), when="indirect", forms=CALL_INDIRECT_FORMS),
    Rule("jmp_indirect", InsnClass.JMP_INDIRECT, "indirect jump: position-independent unless "
         "RIP-relative, which gets a new displacement or a scratch-register load",
         frozenset({"jmp"}), when="indirect", forms=JMP_INDIRECT_FORMS),
    Rule("ret", InsnClass.RET, "ret/ret imm16 pop their target: a copy behaves the same anywhere",
         frozenset({"ret"}), forms=RET_FORMS),
    Rule("rip_relative", InsnClass.RIP_RELATIVE, "[rip + disp32] operand: rewrite the "
         "displacement for the new address, or address through a scratch register when the "
         "XOL page is more than 2 GiB away", when="rip_relative", forms=RIP_RELATIVE_FORMS),
    Rule("plain", InsnClass.PLAIN, "position-independent: depends only on registers and "
         "memory, so a copy plus a jump back behaves the same", when="always",
         forms=PLAIN_FORMS),
)


def _matches(rule: Rule, insn: Insn) -> bool:
    if rule.mnemonics and insn.base_mnemonic not in rule.mnemonics:
        return False
    return rule.when is None or _PREDICATES[rule.when](insn)


def classify(insn: Insn) -> Classification:
    """The first rule of RULES that matches (the last rule, PLAIN, always does)."""
    for rule in RULES:
        if _matches(rule, insn):
            return Classification(rule.cls, rule)
    raise AssertionError("the PLAIN rule matches everything")   # pragma: no cover


def rules_of(cls: InsnClass) -> tuple[Rule, ...]:
    return tuple(r for r in RULES if r.cls is cls)


def forms_of(cls: InsnClass, arch: str) -> tuple[Form, ...]:
    """Generator templates for a class on one architecture (the property tests use these)."""
    return tuple(f for r in rules_of(cls) for f in r.forms if arch in f.arches)


# ---- strategies -----------------------------------------------------------------------------
@dataclass(frozen=True)
class EmulateRule:
    """One instruction shape the emulate strategy (US 7,350,196) executes on the trap frame."""
    name: str
    mnemonic: str
    operands: str | None       # exact op_str, "reg" for any register operand, None for any
    cls: InsnClass
    reason: str


# What the emulate strategy takes: the function-boundary instructions DTrace emulates (seed
# 001) and the branches/calls uprobes emulates (uprobes.c `branch_setup_xol_ops`). Everything
# here is also relocatable; emulation is preferred because nothing is restored or stepped.
EMULATE_RULES = tuple(EmulateRule(*e) for e in (
    ("push_fp", "push", "ebp", InsnClass.PLAIN, "function entry: push the frame pointer"),
    ("push_fp64", "push", "rbp", InsnClass.PLAIN, "function entry: push the frame pointer"),
    ("pop_fp", "pop", "ebp", InsnClass.PLAIN, "function exit: pop the frame pointer"),
    ("pop_fp64", "pop", "rbp", InsnClass.PLAIN, "function exit: pop the frame pointer"),
    ("push_reg", "push", "reg", InsnClass.PLAIN, "push of a register: one store and sp -= w"),
    ("push_rip", "push", "rip", InsnClass.RIP_RELATIVE, "push of a RIP-relative memory word: "
     "one load at the ORIGINAL rip+disp, one store (what no XOL copy can do when the data is "
     "beyond rel32 reach of the XOL page: the scratch-register path moves the stack)"),
    ("enter", "enter", None, InsnClass.PLAIN, "function entry: build a frame"),
    ("leave", "leave", None, InsnClass.PLAIN, "function exit: tear the frame down"),
    ("nop", "nop", None, InsnClass.PLAIN, "nothing to do but advance the IP"),
    ("ret", "ret", None, InsnClass.RET, "function return: pop the IP (and imm16 bytes)"),
    ("jmp_rel", "jmp", None, InsnClass.JMP_REL, "IP = target"),
    ("jcc_rel", "*", None, InsnClass.JCC_REL, "IP = target if the condition holds in EFLAGS"),
    ("call_rel", "call", None, InsnClass.CALL_REL, "push the return address, IP = target"),
    # Refused out of line (RULES: fast_syscall, software_interrupt), but the kernel that runs
    # the call can run it as the instruction would (kernel_model/debug/syscalls.py).
    ("syscall", "syscall", None, InsnClass.REFUSED, "system call: the kernel runs it with "
     "the instruction's own return address (RCX, restart, signals)"),
    ("int80", "int", "0x80", InsnClass.REFUSED, "system call: the kernel runs int 0x80's path "
     "on the trap frame, with the instruction's own return address"),
))


def emulate_rule_for(insn: Insn) -> EmulateRule | None:
    cls = classify(insn).cls
    for rule in EMULATE_RULES:
        if rule.cls is not cls or rule.mnemonic not in ("*", insn.base_mnemonic):
            continue
        if rule.operands is None or rule.operands == insn.op_str or (
                rule.operands == "reg" and len(insn.operands) == 1
                and insn.operands[0].kind == "reg") or (
                rule.operands == "rip" and insn.rip_relative and len(insn.operands) == 1):
            return rule
    return None


@dataclass(frozen=True)
class StrategyPolicy:
    name: str
    accepts: frozenset[InsnClass]
    reason: str


_ALL = frozenset(InsnClass)
STRATEGIES = {s.name: s for s in (
    StrategyPolicy("emulate", frozenset(r.cls for r in EMULATE_RULES),
                   "only the instruction shapes of EMULATE_RULES (see emulate_rule_for)"),
    StrategyPolicy("trampoline", RELOCATABLE, "runs a relocated copy out of line (US 9,336,001)"),
    StrategyPolicy("jump", RELOCATABLE, "like trampoline, for every instruction under the 5-byte "
                   "jmp, provided none refers into the patched bytes (patched_range_conflict)"),
    StrategyPolicy("relocate", RELOCATABLE - {InsnClass.JMP_INDIRECT}, "every reachable "
                   "instruction of the function is relocated into its copy; an indirect jump "
                   "(a jump table) refuses the function"),
    StrategyPolicy("singlestep", _ALL, "runs the original in place, so even refused "
                   "instructions work, except the ones whose rule names no singlestep"),
)}


def strategies_for(insn: Insn) -> tuple[str, ...]:
    """Strategies that can probe `insn`, cheapest first (emulate, jump-free trampoline...)."""
    c = classify(insn)
    out = []
    if emulate_rule_for(insn) is not None:
        out.append("emulate")
    if c.cls in RELOCATABLE:
        out.append("trampoline")
    if c.cls in RELOCATABLE or "singlestep" in c.alternatives:
        out.append("singlestep")
    return tuple(out)


def patched_range_conflict(insn: Insn, start: int, end: int) -> str | None:
    """Why `insn` cannot sit under a jump patch covering [start, end), or None.

    The jump strategy overwrites several instructions; anything that refers to the bytes in
    between (a RIP-relative read of code, a branch into them, a call whose ORIGINAL return
    address — which relocation pushes — lies inside them) would see the patch.
    """
    # Landing on `start` itself is fine: that is where the patch jumps to the trampoline.
    inside = lambda a: a is not None and start < a < end      # noqa: E731
    if insn.rip_relative and start <= insn.rip_target < end:
        return f"{insn} reads the patched bytes through [rip]"
    if inside(insn.branch_target):
        return f"{insn} branches into the patched bytes"
    if "call" in insn.groups and inside(insn.next_address):
        return f"{insn} pushes a return address inside the patched bytes"
    return None


__all__ = ["ARCHES", "Classification", "EMULATE_RULES", "InsnClass", "RELOCATABLE", "RULES",
           "Rule", "STRATEGIES", "classify", "emulate_rule_for", "forms_of",
           "patched_range_conflict", "rules_of", "strategies_for"]
