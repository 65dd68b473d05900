"""Step 1: the naive relocator. It copies the probed instruction's bytes to the out-of-line
page and jumps back to the instruction after the original. Right for an instruction whose
meaning does not depend on where it sits; `trapline check` finds the first one that does.

    trapline check --strategy toy_relocator.step1_copy:NaiveCopy --arch x86_64

A relocator is `relocate(insn, new_address, arch, **options) -> Relocated`: `insn` is the
decoded original (instrumenter/insn/decode.py: raw bytes, address, next_address,
branch_target), `new_address` where the copy will run. A strategy class that carries one as
its `relocator` is a whole probe strategy: trapline's trampoline strategy places it, sends
each hit through the copy, forks and removes it.
"""
from instrumenter.insn.emit import Emitter
from instrumenter.insn.policy import classify
from instrumenter.insn.relocate import Relocated
from instrumenter.strategies.trampoline import TrampolineProbes


def copy_bytes(insn, new_address, arch, **options):
    """The original bytes, then a jump back to the instruction after the original."""
    out = Emitter(new_address, arch)
    out.raw(insn.raw)
    out.jump(insn.next_address, "fallthrough")     # jmp rel32, or an absolute jump when far
    return Relocated(insn, classify(insn).cls, new_address, bytes(out.code), tuple(out.exits),
                     "copy")


class NaiveCopy(TrampolineProbes):
    relocator = staticmethod(copy_bytes)
