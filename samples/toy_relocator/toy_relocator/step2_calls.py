"""Step 2: the first bug fixed. Step 1's report was a `call` whose copy pushed the COPY's
return address: the callee returns into the out-of-line page instead of the program (the
first difference: the stack word the call wrote). A relocated call must push the ORIGINAL
return address and then go where the call goes:

  call rel32      push next_address; jmp target
  call r/m        push next_address; jmp r/m   (the same ModRM, /2 becomes /4: SDM Vol. 2A,
                  CALL and JMP, opcode FF)

Everything else is still copied. `trapline check` finds the next bug:

    trapline check --strategy toy_relocator.step2_calls:CallsFixed --arch x86_64
"""
from instrumenter.insn.emit import Emitter
from instrumenter.insn.policy import InsnClass, classify
from instrumenter.insn.relocate import Relocated
from instrumenter.strategies.trampoline import TrampolineProbes

from .step1_copy import copy_bytes

PREFIXES = {0x26, 0x2E, 0x36, 0x3E, 0x64, 0x65, 0x66, 0x67, 0xF0, 0xF2, 0xF3}


def calls_fixed(insn, new_address, arch, **options):
    cls = classify(insn).cls
    if cls not in (InsnClass.CALL_REL, InsnClass.CALL_INDIRECT):
        return copy_bytes(insn, new_address, arch)
    out = Emitter(new_address, arch)
    out.push_word(insn.next_address)                # the return address the original pushes
    if cls is InsnClass.CALL_REL:
        out.jump(insn.branch_target, "taken")
    else:
        out.raw(_as_jmp(insn.raw, arch))
    return Relocated(insn, cls, new_address, bytes(out.code), tuple(out.exits), "call")


def _as_jmp(raw: bytes, arch: str) -> bytes:
    """`call r/m` (FF /2) as `jmp r/m` (FF /4): the same prefixes, ModRM operand and bytes."""
    at = 0
    while raw[at] in PREFIXES or (arch == "x86_64" and 0x40 <= raw[at] <= 0x4F):
        at += 1
    modrm = raw[at + 1]
    return raw[:at + 1] + bytes(((modrm & ~0x38) | (4 << 3),)) + raw[at + 2:]


class CallsFixed(TrampolineProbes):
    relocator = staticmethod(calls_fixed)
