"""Taken branches of one Machine, counted with a translation-block hook (issue 18: the
profiler's `--event branches`, US 7,823,129's "programmed performance monitor event" — what a
BR_INST_RETIRED.NEAR_TAKEN counter is to a real profiler).

Unicorn calls a UC_HOOK_BLOCK hook as each translated block begins, with its address and size.
A block that does not begin where the previous one ended was reached by a taken branch (a jump,
a call, a return, a taken conditional branch); one that begins there was reached by falling
through (a conditional branch not taken, or a block split at a page boundary or at Unicorn's
block-size limit). So `taken` counts exactly the taken branches, except a jump to the very next
instruction (which changes nothing). The first block of every run is never counted: a run
begins where the last one stopped, or where an interrupt or a scheduler switch put the CPU, none
of them a branch of the program's.

The countdown: with `left` set, the hook stops the run (uc_emu_stop) at the block whose branch
brings it to zero; `fired` says so. Unicorn finishes the block it is in, so the run stops at the
next block boundary — deterministic, as every count here.

Cost: one Python call per block (docs/unicorn.md), paid only while a counter exists:
a profiler asks for it.
"""
from unicorn import UC_HOOK_BLOCK

from .internals.binding import HOOK_CODE_CFUNC, keep_hook_exception
from .raw_hooks import add_raw_hook


class BranchCounter:
    __slots__ = ("taken", "left", "fired", "_next", "_callback")

    def __init__(self, machine):
        self.taken = 0
        self.left = 0                  # taken branches until the run stops; 0: never stop
        self.fired = False
        self._next = None              # where the previous block ended (None: a run began)
        uc = machine.uc

        def on_block(_handle, address, size, _user):
            try:
                if self._next is not None and address != self._next:
                    self.taken += 1
                    if self.left:
                        self.left -= 1
                        if not self.left:
                            self.fired = True
                            uc.emu_stop()
                self._next = address + size
            except BaseException as error:            # noqa: B036 - re-raised by emu_start
                keep_hook_exception(uc, error)

        self._callback = add_raw_hook(uc, UC_HOOK_BLOCK, HOOK_CODE_CFUNC, on_block)
        uc.ctl_flush_tb()              # blocks translated before have no call to the hook

    def begin_run(self, left: int) -> None:
        """A run begins: its first block is no branch; stop after `left` taken ones (0: never)."""
        self._next = None
        self.left = left
        self.fired = False
