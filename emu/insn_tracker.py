"""A code hook on every instruction, through the public API: the fallback of two private fields
of Unicorn (emu/internals/) when they are not where they were verified.

  value   instructions begun since the Machine last reset it, as Unicorn's own counter
          (uc->emu_counter) counts them: the instruction counter's fallback (icount.py).
  last    where the last instruction began: a CPU exception is reported with the PC of the
          instruction that raised it, and `int n` with the PC after it (Intel SDM Vol. 3A,
          6.5), so an interrupt whose PC is not where the last instruction began came from an
          instruction (exception_is_int's fallback, errata.py).

Cost: a Python call per instruction (many times slower guest code, docs/unicorn.md), which is
why it is only a fallback. Unicorn calls its own counting hook first and skips the others
for the instruction it stops before (uc.c helper_uc_tracecode), so a run ended by its budget
counts the same; tests/unit/emu/internals/test_internals.py compares the two counters on one
program.
"""
from unicorn import UC_HOOK_CODE

from .internals.binding import HOOK_CODE_CFUNC, keep_hook_exception
from .raw_hooks import add_raw_hook


class InstructionTracker:
    __slots__ = ("value", "last", "_callback")

    def __init__(self, uc, *, bits: int):
        self.value = 0
        self.last = -1
        mask = (1 << bits) - 1

        def on_instruction(_handle, address, _size, _user):
            try:
                self.value += 1
                self.last = address & mask
            except BaseException as error:            # noqa: B036 - re-raised by emu_start
                keep_hook_exception(uc, error)

        self._callback = add_raw_hook(uc, UC_HOOK_CODE, HOOK_CODE_CFUNC, on_instruction)
        uc.ctl_flush_tb()              # code translated before has no call to the hook
