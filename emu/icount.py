"""Exact guest instruction counts: the virtual time of traces (issue 4: "timestamps are virtual
instruction counts").

Unicorn counts instructions only when `emu_start` is given a count: it then installs an internal
C code hook (uc.c `hook_count_cb`) that increments `uc->emu_counter` before every instruction and
stops the run when it passes `uc->emu_count`. The counter is reset at every `emu_start` and is
not part of the API: its place in `struct uc_struct` is located once per process
(internals/uc_struct.py). Reading it is one ctypes load, so a probe hit inside a hook sees the
exact count at that instruction, not a count rounded to a scheduler slice. Where it is not
located, a code hook counts the same instructions (insn_tracker.py: slower, the same counts).

Cost: the counting hook makes translated code call a helper per instruction (slower guest code:
docs/unicorn.md), so a Machine counts only once a tool asks it to (`Machine.count_instructions`),
and only for runs that need a stop after N instructions (a scheduler slice, an instruction alarm)
or a count inside a block (code hooks: Machine.exact_count_users). Every other run of a counting
Machine counts with the block clock's C hook, one call per block, and gets the same numbers
(lazy_count.py: a per-instruction helper call made `trace` on code no probe touches cost
several times `run`; bench/trace_cost.py measures the two).

What is counted: every instruction the CPU began, including the int3 of a probe, the
instructions of trampolines and native actions, and an instruction that faulted (its hook ran
before the fault). The count is deterministic: the same run counts the same instructions.
"""
import ctypes

from unicorn import Uc

from . import internals
from .internals import uc_struct

# A count that never runs out: Unicorn takes a size_t, and counting needs count > 0.
UNLIMITED = 1 << 62


def counter_of(uc: Uc, fallback):
    """A live counter of `uc`'s instructions in the current emu_start: an integer `value`
    that the Machine sets to 0 before each run (Unicorn resets its own too). The view of
    uc->emu_counter where it is located, else `fallback()` (the Machine's InstructionTracker)."""
    offset = internals.located().emu_counter
    if offset is None:
        return fallback()
    return uc_struct.view(uc, offset)


class InstructionClock:
    """Instructions executed so far, shared by every Machine of one run (a forked child's
    Machine joins its parent's clock), so that timestamps of all processes are one order.

    `total` holds the instructions of finished `run()` slices; the Machine that is running
    adds its live counter when asked inside a hook.
    """

    def __init__(self) -> None:
        self.total = 0
        # `total` again, where C reads it (clock_parts.py): every Machine sharing this clock
        # sees another's finished slices at once
        self.cell = ctypes.c_int64()

    def add(self, insns: int) -> None:
        """A finished run() slice executed `insns` instructions."""
        self.total += insns
        self.cell.value = self.total
