"""Where an emulated return probe goes: the frame-dismantling instruction or the `ret`.

US 7,350,196 ([0029], CODE SAMPLE 2) fires the return probe at the instruction that dismantles the
stack frame — `pop %ebp` or `leave` — and DTrace's fbt provider on amd64 patches the `ret`
instead. Both see every return, provided the probe sits on an instruction that runs exactly
once per return. The modes:

  "frame"  (the default, US 7,350,196): for each `ret`, the `pop %ebp`/`pop %rbp`/`leave` right
           before it — when the only way into the `ret` is falling through from it. A `ret`
           that a branch inside the function targets (a shrink-wrapped early return that never
           built a frame), a `ret` after anything else (a frameless function), and every `ret`
           of a function with an indirect jump (a jump table might target it) keep the probe
           on the `ret` itself, so each return is still seen exactly once.
  "ret"    (DTrace fbt on amd64): every `ret`/`ret imm16`.

A function may also leave by a tail jump (`jmp f`, a jcc to f, `jmp *reg` through a pointer):
it returns through f's `ret`, which no site of its own sees. Every jump that may leave the
function (`leaving_jumps`: a direct target outside it, or any indirect jump, whose target is
known only when it runs) gets a site too — where it can be emulated: the emulate strategy
refuses a return probe on a function with an indirect jump, which it cannot run itself; when the emulated jump does leave for a function's
entry, the return address at [sp] is swapped for the uretprobe landing there
(instrumenter/strategies/emulate/strategy.py _TailJumpHit), as a uretprobe's entry does, so the return
through f's `ret` is seen once, after f's own.

The return value is already in eax/rax at the `pop`/`leave` for compiled code: the psABIs
return in eax/rax, and epilogues only restore callee-saved registers and the stack after the
value is computed.
"""
from dataclasses import dataclass

from ...insn.decode import Insn, boundaries, decode
from ...errors import InstrumenterError

RETURN_MODES = ("frame", "ret")
_DISMANTLE = {"i386": ("pop ebp", "leave"), "x86_64": ("pop rbp", "leave")}


@dataclass(frozen=True)
class ReturnSite:
    address: int          # where the probe goes
    ret: int              # the `ret` this return leaves by
    insn: str             # what is probed there ("pop ebp", "leave", "ret", "ret 8")


def function_insns(code: bytes, start: int, arch: str) -> list[Insn]:
    return [decode(code[a - start:], a, arch) for a in boundaries(code, start, arch)]


def return_sites(code: bytes, start: int, arch: str, mode: str = "frame") -> list[ReturnSite]:
    """One probe site per `ret` of the function whose bytes are `code` at `start`."""
    if mode not in RETURN_MODES:
        raise InstrumenterError(f"unknown return-probe mode {mode!r} (have: {', '.join(RETURN_MODES)})")
    insns = function_insns(code, start, arch)
    targets = {i.branch_target for i in insns if i.branch_target is not None}
    indirect = any(i.groups & {"jump"} and i.branch_target is None for i in insns)
    sites = []
    for before, insn in zip([None, *insns], insns):
        if insn.base_mnemonic != "ret":
            continue
        text = f"{insn.mnemonic} {insn.op_str}".strip()
        if (mode == "frame" and before is not None and not indirect
                and insn.address not in targets and _dismantles_frame(before)):
            sites.append(ReturnSite(before.address, insn.address, _text(before)))
        else:
            sites.append(ReturnSite(insn.address, insn.address, text))
    return sites


def _dismantles_frame(insn: Insn) -> bool:
    return _text(insn) in _DISMANTLE[insn.arch] and 0x66 not in insn.prefixes


def _text(insn: Insn) -> str:
    return f"{insn.mnemonic} {insn.op_str}".strip()


def leaving_jumps(code: bytes, start: int, arch: str) -> list[Insn]:
    """The jumps of the function whose bytes are `code` at `start` that may leave it: a
    jmp/jcc whose target lies outside it, and every indirect jmp (a jump table's or a tail
    call through a pointer: only running it tells which)."""
    end = start + len(code)
    found = []
    for insn in function_insns(code, start, arch):
        if "jump" not in insn.groups:
            continue
        target = insn.branch_target
        if target is None or not start <= target < end:
            found.append(insn)
    return found
