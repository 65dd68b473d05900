"""Relocation: code to place at a new address that behaves exactly like one instruction at its
original address, and then returns control to original code.

`relocate(insn, new_address, arch)` picks the recipe from the instruction's class
(instrumenter/insn/policy.py). Every recipe keeps the architectural state identical to running the
original in place — registers, EFLAGS, memory the program can rely on — and every way out
leads to an ORIGINAL address (the fall-through, the branch target, or the callee entered with
the ORIGINAL return address on the stack), so nothing outside the XOL page ever sees it.

Stack use of the glue, and why it is safe:
  * The x86-64 scratch-register path (RIP-relative operand more than 2 GiB from the copy)
    saves the scratch register with a push, but first moves rsp down by 128 bytes with `lea`
    (flags untouched): the psABI (3.2.2) lets leaf functions keep data in the 128-byte red
    zone below rsp, which a plain push would overwrite. Only memory below the red zone is
    written, which the ABI never promises to keep (signal delivery overwrites it too). A
    per-probe save slot in the XOL page would avoid even that, but is not thread-safe when
    two threads run the same trampoline; the stack is per thread.
  * Indirect calls read their target with `push <operand>` (the effective address is computed
    before rsp moves, as for the original call) and duplicate it one slot lower: the slot
    below the callee's entry stack pointer ends up holding the target. At a function's entry
    nothing below its stack pointer is live, so no one can observe it.
"""
from dataclasses import dataclass

from .decode import Insn
from .emit import RED_ZONE, Emitter, ExitPoint
from ..errors import InstrumenterError, RelocationRefused
from .policy import InsnClass, classify
from .riprel import choose_scratch, displacement_for, through_scratch, with_displacement

_WORD = {"i386": 4, "x86_64": 8}


@dataclass(frozen=True)
class Relocated:
    insn: Insn                       # the original instruction
    cls: InsnClass
    address: int                     # where `code` is meant to be placed
    code: bytes
    exits: tuple[ExitPoint, ...]     # the jumps in `code` that lead back to original code
    method: str                      # "copy", "displacement", "scratch", "branch", "call"...
    scratch: str | None = None       # the scratch register of the far RIP-relative path

    @property
    def length(self) -> int:
        return len(self.code)

    @property
    def falls_through(self) -> bool:
        """Whether control can come back at insn.next_address (not: jmp, call, ret)."""
        return any(e.kind == "fallthrough" for e in self.exits)


def relocate(insn: Insn, new_address: int, arch: str, *, scratch_ok: bool = True,
             task_scratch: bool = False) -> Relocated:
    """Code for `new_address` that behaves like `insn` at insn.address (see module doc).

    scratch_ok=False refuses instructions that would need the scratch-register path;
    task_scratch=True lets the far RIP-relative instructions that use the stack pointer take
    the two-trap path with the scratch register kept by the kernel (method "task-scratch").
    Raises RelocationRefused (with the strategies that could take it instead) otherwise.
    """
    if arch != insn.arch:
        raise InstrumenterError(f"{insn} was decoded as {insn.arch}, not {arch}")
    c = classify(insn)
    if c.cls is InsnClass.REFUSED:
        raise RelocationRefused(f"{insn}: {c.reason}", c.alternatives)
    e = Emitter(new_address, arch)
    if task_scratch and _needs_task_scratch(insn, c.cls, new_address):
        method, scratch = _task_scratch(insn, e)
    else:
        method, scratch = _RECIPES[c.cls](insn, e, scratch_ok)
    return Relocated(insn, c.cls, new_address, bytes(e.code), tuple(e.exits), method, scratch)


# ---- recipes: each emits into `e` and returns (method, scratch register or None) -------------
def _copy(insn: Insn, e: Emitter, _scratch_ok: bool):
    """Position-independent: the bytes themselves; a jump back if the instruction falls through."""
    e.raw(insn.raw)
    if insn.base_mnemonic not in ("jmp", "ret"):
        e.jump(insn.next_address, "fallthrough")
    return "copy", None


def _rip_relative(insn: Insn, e: Emitter, scratch_ok: bool):
    falls_through = insn.base_mnemonic != "jmp"
    disp = displacement_for(insn, e.here)
    if disp is not None:
        e.raw(with_displacement(insn.raw, insn, disp))
        if falls_through:
            e.jump(insn.next_address, "fallthrough")
        return "displacement", None
    _require_scratch(insn, scratch_ok)
    if not falls_through:
        return _far_rip_jump(insn, e)
    if insn.uses("rsp"):
        raise RelocationRefused(f"{insn}: uses the stack pointer, which the scratch-register "
                                "save moves (XOL page more than 2 GiB away)", ("singlestep",))
    scratch = choose_scratch(insn)
    e.lea_sp(-RED_ZONE)
    e.push_reg(scratch)
    e.mov_reg_imm64(scratch, insn.rip_target)
    e.raw(through_scratch(insn.raw, insn, scratch))
    e.pop_reg(scratch)
    e.lea_sp(RED_ZONE)
    e.jump(insn.next_address, "fallthrough")
    return "scratch", scratch


def _needs_task_scratch(insn: Insn, cls: InsnClass, at: int) -> bool:
    return (cls is InsnClass.RIP_RELATIVE and insn.uses("rsp")
            and displacement_for(insn, at) is None)


def _task_scratch(insn: Insn, e: Emitter):
    """`int3; insn through scratch; int3`: the traps' handlers keep the scratch register in
    per-thread state (see the module doc). The first trap is the code's first byte; the
    second is the exit, its target where the thread resumes."""
    scratch = choose_scratch(insn)
    e.raw(b"\xcc")
    e.raw(through_scratch(insn.raw, insn, scratch))
    e.exits.append(ExitPoint(e.here, insn.next_address, "task-scratch-restore"))
    e.raw(b"\xcc")
    return "task-scratch", scratch


def _far_rip_jump(insn: Insn, e: Emitter):
    """jmp [rip+d] beyond ±2 GiB: push the loaded target below the red zone, `ret RED_ZONE`."""
    scratch = choose_scratch(insn)
    e.lea_sp(-RED_ZONE)
    e.push_reg(scratch)
    e.mov_reg_imm64(scratch, insn.rip_target)
    e.raw(through_scratch(_as_push(insn), insn, scratch))
    e.load_reg_from_sp(scratch, 8)
    e.ret(RED_ZONE + 8)                  # pops the target, then drops the save + red zone gap
    return "scratch", scratch


def _jump_rel(insn: Insn, e: Emitter, _scratch_ok: bool):
    e.jump(insn.branch_target, "taken")
    return "branch", None


def _jcc_rel(insn: Insn, e: Emitter, _scratch_ok: bool):
    cc = insn.opcode[-1] & 0x0F          # 70+cc rel8 or 0f 80+cc rel32 (SDM Vol. 2A, Jcc)
    if e.jcc_rel32(cc, insn.branch_target):
        e.jump(insn.next_address, "fallthrough")
        return "branch", None
    short = bytes((0x70 | cc,))
    _branch_over(insn, e, short)
    return "branch", None


def _loop_jecxz(insn: Insn, e: Emitter, _scratch_ok: bool):
    """loop/jecxz have only rel8: `<op> taken; jmp fall-through; taken: jmp target`."""
    head = insn.raw[:insn.imm_offset]    # prefixes (67: counter size) + opcode
    _branch_over(insn, e, head)
    return "branch", None


def _branch_over(insn: Insn, e: Emitter, head: bytes) -> None:
    short_end = e.here + len(head) + 1
    skip = e.jump_len(insn.next_address, at=short_end)
    e.raw(head + bytes((skip,)))
    e.jump(insn.next_address, "fallthrough")
    e.jump(insn.branch_target, "taken")


def _call_rel(insn: Insn, e: Emitter, _scratch_ok: bool):
    """Push the ORIGINAL return address and jump: callees never see a trampoline address."""
    e.push_word(insn.next_address)
    e.jump(insn.branch_target, "call")
    return "call", None


def _call_indirect(insn: Insn, e: Emitter, scratch_ok: bool):
    """push <target operand>; duplicate it; overwrite the upper copy with the ORIGINAL return
    address; ret — which pops the target, leaving exactly what the original call leaves."""
    word = _WORD[insn.arch]
    push = _as_push(insn)
    if not insn.rip_relative:
        e.raw(push)
    else:
        disp = displacement_for(insn, e.here)
        if disp is None:
            return _far_rip_call(insn, e, scratch_ok)
        e.raw(with_displacement(push, insn, disp))
    e.push_at_sp()
    e.store_word_at_sp(word, insn.next_address)
    e.ret()
    return "call", None


def _far_rip_call(insn: Insn, e: Emitter, scratch_ok: bool):
    _require_scratch(insn, scratch_ok)
    scratch = choose_scratch(insn)
    e.push_reg(scratch)                   # the slot the return address will take
    e.mov_reg_imm64(scratch, insn.rip_target)
    e.raw(through_scratch(_as_push(insn), insn, scratch))
    e.load_reg_from_sp(scratch, 8)
    e.store_word_at_sp(8, insn.next_address)
    e.ret()
    return "scratch", scratch


def _jmp_indirect(insn: Insn, e: Emitter, scratch_ok: bool):
    if insn.rip_relative:
        return _rip_relative(insn, e, scratch_ok)
    return _copy(insn, e, scratch_ok)


def _as_push(insn: Insn) -> bytes:
    """The same operand encoding as a push: FF /2 (call) or FF /4 (jmp) -> FF /6 (SDM Vol. 2B,
    PUSH). A bnd (F2) prefix is refused rather than dropped: dropping a byte would shift
    every offset the rewrite relies on, and F2 is a mandatory prefix for other opcodes."""
    raw = bytearray(insn.raw)
    raw[insn.modrm_offset] = (raw[insn.modrm_offset] & 0xC7) | (6 << 3)
    if 0xF2 in insn.prefixes:
        raise RelocationRefused(f"{insn}: bnd-prefixed indirect branch", ("singlestep",))
    return bytes(raw)


def _require_scratch(insn: Insn, scratch_ok: bool) -> None:
    if not scratch_ok:
        raise RelocationRefused(f"{insn}: the RIP-relative operand is more than 2 GiB from the "
                                "XOL page and scratch registers are not allowed", ("singlestep",))


_RECIPES = {
    InsnClass.PLAIN: _copy, InsnClass.RET: _copy, InsnClass.RIP_RELATIVE: _rip_relative,
    InsnClass.JMP_REL: _jump_rel, InsnClass.JCC_REL: _jcc_rel,
    InsnClass.LOOP_JECXZ: _loop_jecxz, InsnClass.CALL_REL: _call_rel,
    InsnClass.CALL_INDIRECT: _call_indirect, InsnClass.JMP_INDIRECT: _jmp_indirect,
}
