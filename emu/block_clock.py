"""Guest instructions counted block by block, in C: the profiling timer's clock (issue 18).

Unicorn stops a run after N instructions only through `emu_start(count=N)`, which translates
every instruction with a call to its counting hook (icount.py): several times slower on
call-heavy code (bench/profile.py). A block hook is called once per translated block instead;
written in C (native/block_clock.c) it costs little beside the block itself. It adds each block's
instructions as the block begins and stops the run at the first block boundary at or after a
deadline, before that block runs (the stop lands on the block's first instruction).

So the clock's count and its stops are at block granularity: a run stopped at the deadline has
executed every instruction it counted, and its PC is the first instruction of the next block.
A block cut short (a fault or an interrupt in its middle) is counted whole. Everything is
deterministic: the same run begins the same blocks. Each block's instruction count is decoded
once per (address, length), in C with capstone's library (the Python package's own copy,
loaded without the package where it can be: capstone_lib.py), and kept; code patched through
Memory (which bumps `code_epoch`) empties the table at the next run. A guest that rewrites its
own code in place keeping a block's start and length would keep the old count until then.

`available()` is False where the C hook cannot be built (native/__init__.py); the timer then
uses Unicorn's exact counting instead.
"""
from __future__ import annotations

import ctypes
import weakref

from unicorn import UC_HOOK_BLOCK

from . import capstone_lib, native
from .internals.binding import handle, uc_hook_h, uclib


def _capstone():
    """Capstone's library (capstone_lib.py: without its Python package where it can)."""
    return capstone_lib.library()[0]


RECENT = 256                   # native/block_clock.c's direct-mapped entries


class _Entry(ctypes.Structure):
    """struct entry: a block (its start and length in bytes) and its instructions."""
    _fields_ = [("address", ctypes.c_uint64), ("size", ctypes.c_uint32), ("insns", ctypes.c_uint32)]


class _State(ctypes.Structure):
    """struct block_clock of native/block_clock.c, field for field."""
    _fields_ = [("recent", _Entry * RECENT), ("executed", ctypes.c_int64), ("deadline", ctypes.c_int64),
                ("stopped_at", ctypes.c_int64), ("fired", ctypes.c_int32),
                ("failed", ctypes.c_int32), ("stop", ctypes.c_void_p),
                ("mem_read", ctypes.c_void_p), ("disasm_iter", ctypes.c_void_p),
                ("capstone", ctypes.c_size_t), ("insn", ctypes.c_void_p),
                ("table", ctypes.c_void_p), ("mask", ctypes.c_uint64), ("used", ctypes.c_uint64),
                ("take", ctypes.c_void_p), ("capture", ctypes.c_void_p), ("interval", ctypes.c_int64),
                ("paused", ctypes.c_int32), ("last", ctypes.c_void_p)]


_CLOCKS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()   # Machine -> its clock


def available() -> bool:
    return native.load("block_clock") is not None


def clock_of(machine) -> "BlockClock":
    """The block clock of `machine`, made at the first call. It lives as long as the Machine:
    Unicorn holds a pointer to its state until the Uc is closed. Once made, its hook stays
    (counting only) when no deadline is set."""
    clock = _CLOCKS.get(machine)
    if clock is None:
        clock = _CLOCKS[machine] = BlockClock(machine)
    return clock


class BlockClock:
    """The instruction clock of one Machine. `executed` counts on from its creation."""

    def __init__(self, machine):
        lib = native.load("block_clock")
        if lib is None:
            raise RuntimeError(native.unavailable["block_clock"])
        self._machine = machine
        uc = machine.uc
        self._epoch = machine.mem.code_epoch
        self._left, self._capture = 0, None
        self._state = state = _State()
        state.deadline = -1
        state.stop = ctypes.cast(uclib.uc_emu_stop, ctypes.c_void_p)
        state.mem_read = ctypes.cast(uclib.uc_mem_read, ctypes.c_void_p)
        cs, x86, mode_32, mode_64 = capstone_lib.library()
        state.disasm_iter = ctypes.cast(cs.cs_disasm_iter, ctypes.c_void_p)
        mode = mode_64 if machine.arch.bits == 64 else mode_32
        handle_ = ctypes.c_size_t()
        if cs.cs_open(x86, mode, ctypes.byref(handle_)) != 0:
            raise RuntimeError("capstone cannot open an x86 handle")
        state.capstone = handle_.value
        state.insn = cs.cs_malloc(handle_.value)
        hook = uc_hook_h()
        status = uclib.uc_hook_add(handle(uc), ctypes.byref(hook), UC_HOOK_BLOCK,
                                   ctypes.cast(lib.block_clock_on_block, ctypes.c_void_p),
                                   ctypes.cast(ctypes.byref(state), ctypes.c_void_p),
                                   ctypes.c_uint64(1), ctypes.c_uint64(0))
        if status != 0:
            raise RuntimeError(f"cannot add the block clock's hook: error {status}")
        uc.ctl_flush_tb()              # blocks translated before have no call to the hook
        # The table and the decoder are C memory: free them with the clock (the hook dies with
        # its Uc, which the Machine keeps no longer than this clock's owner).
        weakref.finalize(self, _release, lib, state, handle_)

    @property
    def executed(self) -> int:
        """Instructions of the blocks begun on this Machine since the clock was made."""
        return self._state.executed

    @property
    def fired(self) -> bool:
        """The last run stopped at its deadline."""
        return bool(self._state.fired)

    @property
    def paused(self) -> bool:
        """The last run stopped because the tick handler in C took a tick and asked to."""
        return bool(self._state.paused)

    @property
    def left(self) -> int:
        """Instructions from the end of the last run to its deadline as it was then (moved on
        by every tick the C handler took; <= 0 when the deadline was reached and not taken)."""
        return self._left

    @property
    def state(self) -> _State:
        """The C hook's state, read in place."""
        return self._state

    def last_block(self) -> tuple[int, int, int]:
        """(start, length in bytes, instructions) of the block begun last, (0, 0, 0) before
        any (emu/lazy_count.py: an exact count inside it)."""
        last = self._state.last
        if not last:
            return 0, 0, 0
        entry = _Entry.from_address(last)
        return entry.address, entry.size, entry.insns

    def forget_changed_code(self) -> None:
        """Empty the table of block counts if code was patched since it was filled."""
        if self._machine.mem.code_epoch != self._epoch:
            self._epoch = self._machine.mem.code_epoch
            native.load("block_clock").block_clock_clear(ctypes.byref(self._state))

    def attach_capture(self, capture, interval: int) -> None:
        """Let `capture` (tick_capture.TickCapture) take the ticks first: one it takes moves
        the deadline on by `interval` instead of stopping the run."""
        state = self._state
        state.take, state.capture, state.interval = capture.take, capture.context, interval
        self._capture = capture                  # its state must outlive the hook's use

    def detach_capture(self) -> None:
        state = self._state
        state.take = state.capture = None
        self._capture = None

    def begin_run(self, left: int) -> None:
        """A run begins: stop it at the first block boundary `left` instructions or more from
        here (0: the next block; None: never)."""
        self.forget_changed_code()
        state = self._state
        state.deadline = -1 if left is None else state.executed + max(left, 0)
        state.fired = state.paused = 0

    def end_run(self) -> None:
        """The run is over: later runs (another tool's, the scheduler's) are never stopped."""
        state = self._state
        self._left = state.deadline - state.executed
        state.deadline = -1


def _release(lib, state: _State, capstone_handle: ctypes.c_size_t) -> None:
    lib.block_clock_clear(ctypes.byref(state))
    _capstone().cs_free(state.insn, 1)
    _capstone().cs_close(ctypes.byref(capstone_handle))
