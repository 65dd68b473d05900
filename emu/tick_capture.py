"""The profiling timer's tick taken in C, without leaving Unicorn (native/tick_capture.c).

A tick the kernel delivers costs a stop of Unicorn, a restart and a trap through the IDT in
Python (bench/profile.py), about as long as the guest takes to run 10 000 instructions: a
sampling profiler at that interval would double the run. So the tick's first half runs where
the clock fires, in the block clock's C hook, as a real profiler's interrupt handler records a
sample into a ring buffer (perf's NMI handler and its mmap'd buffer) and the tool reads the
buffer later: the PC, the stack pointer and, in stack mode, the return addresses, walked with
the unwind rules the profiler taught the capture (each rule once, from its own walks).

The capture never guesses: a tick whose walk meets an address it has no rule for, a register a
rule needs and the frame lost, memory it cannot read, a stack that does not grow, or a full
buffer, is declined, and the clock stops the run for the kernel to deliver that tick the
ordinary way, with live registers. The records are the ticks' own: their instruction count,
their SP and their frames, exactly what a delivered tick would have seen (the rules are the
unwinder's, and the walk the same).

In PC mode a capture may count the ticks per PC instead (`histogram`): a tool that only counts
samples per PC (the profiler's report) reads one Tally per distinct PC a drain, with the count
and the time of its first tick, where it read a record a tick; a PC that finds no room in the
histogram gets its record as before.

One capture per Machine (one address space): its rules are valid for the objects mapped there,
and whoever maps or unmaps an object makes it `forget` them.
"""
from __future__ import annotations

import ctypes
import struct
import weakref
from typing import NamedTuple

from . import native
from .internals.binding import handle, uclib
from .registers import REGISTER_IDS

MAX_REGS, MAX_SAVED, MAX_DEPTH = 16, 8, 256
CAPACITY = 1 << 16                  # words of records: ~2 000 samples of 30 frames
TALLY_LIMIT = 1 << 16               # distinct PCs a histogram counts between two drains
RULE_PLAIN, RULE_OUTERMOST, RULE_ZERO_FRAME = 1, 2, 3
RETURNS_ONLY, CFA_DEREF, FIRST_ONLY, SIGNAL_FRAME = 1, 2, 4, 8
# Why a tick was declined (native/tick_capture.c's enum); 0: the last one was taken.
DECLINED = ("taken", "no rule", "register lost", "memory unreadable", "buffer full",
            "too deep", "stack does not grow", "no PC")


class _Rule(ctypes.Structure):
    _fields_ = [("lookup", ctypes.c_uint64), ("kind", ctypes.c_int8), ("cfa_reg", ctypes.c_int8),
                ("nsaved", ctypes.c_int8), ("flags", ctypes.c_int8), ("lost", ctypes.c_uint32),
                ("cfa_offset", ctypes.c_int64), ("saved_reg", ctypes.c_int8 * MAX_SAVED),
                ("saved_offset", ctypes.c_int32 * MAX_SAVED),
                ("saved_base", ctypes.c_int8 * MAX_SAVED)]


class _State(ctypes.Structure):
    """struct tick_capture of native/tick_capture.c, field for field."""
    _fields_ = [("reg_read", ctypes.c_void_p), ("mem_read", ctypes.c_void_p),
                ("nregs", ctypes.c_int32), ("reg_ids", ctypes.c_int32 * MAX_REGS),
                ("keep", ctypes.c_uint32), ("word", ctypes.c_int32), ("stack", ctypes.c_int32),
                ("buffer", ctypes.c_void_p), ("capacity", ctypes.c_uint64), ("used", ctypes.c_uint64),
                ("records", ctypes.c_uint64), ("stop_after", ctypes.c_uint64),
                ("declined", ctypes.c_int32), ("rules", ctypes.c_void_p), ("mask", ctypes.c_uint64),
                ("nrules", ctypes.c_uint64), ("last_n", ctypes.c_uint64),
                ("last_frames", ctypes.c_uint64 * MAX_DEPTH),
                ("histogram", ctypes.c_int32), ("tallies", ctypes.c_void_p),
                ("ntallies", ctypes.c_uint64), ("tally_capacity", ctypes.c_uint64),
                ("tally_limit", ctypes.c_uint64), ("tally_index", ctypes.c_void_p),
                ("tally_mask", ctypes.c_uint64)]


class Captured(NamedTuple):
    """One tick the capture took: after `executed` instructions of the block clock, with the
    interrupted SP, and the PC then the return addresses outwards (just the PC in PC mode), of
    which the outermost `shared` are those of the record before it in the same drain (never
    its PC nor this one's): a tool that names the frames may take those names from it."""
    executed: int
    sp: int
    frames: tuple[int, ...]
    shared: int = 0


class Tally(NamedTuple):
    """The ticks a histogram counted at one PC since the last drain: how many, and the
    `executed` of the first."""
    pc: int
    count: int
    first: int


def available() -> bool:
    return native.load("tick_capture") is not None


class TickCapture:
    """The C tick handler of one Machine. `registers`: the IP, the SP, then the others a rule
    may name; `preserved`: those a callee keeps (psABI), carried into the caller's frame;
    `histogram` (PC mode): count the ticks per PC, up to `tally_limit` PCs a drain."""

    def __init__(self, machine, registers: tuple[str, ...], preserved: tuple[str, ...], *,
                 stack: bool, capacity: int = CAPACITY, histogram: bool = False,
                 tally_limit: int | None = None):
        lib = native.load("tick_capture")
        if lib is None:
            raise RuntimeError(native.unavailable["tick_capture"])
        if len(registers) > MAX_REGS:
            raise ValueError(f"at most {MAX_REGS} registers")
        if histogram and stack:
            raise ValueError("a histogram counts PCs: PC mode only")
        self._lib = lib
        self.index = {name: i for i, name in enumerate(registers)}
        self._buffer = (ctypes.c_uint64 * capacity)()
        self._state = state = _State()
        state.reg_read = ctypes.cast(uclib.uc_reg_read, ctypes.c_void_p)
        state.mem_read = ctypes.cast(uclib.uc_mem_read, ctypes.c_void_p)
        state.nregs = len(registers)
        for i, name in enumerate(registers):
            state.reg_ids[i] = REGISTER_IDS[name]
        state.keep = sum(1 << self.index[name] for name in preserved)
        state.word = machine.arch.bits // 8
        state.stack = int(stack)
        state.buffer = ctypes.cast(self._buffer, ctypes.c_void_p)
        state.capacity = capacity
        state.histogram = int(histogram)
        state.tally_limit = TALLY_LIMIT if tally_limit is None else tally_limit
        self.histogram = histogram
        self.take = ctypes.cast(lib.tick_capture_take, ctypes.c_void_p)
        self.context = ctypes.cast(ctypes.byref(state), ctypes.c_void_p)
        if not getattr(lib, "_typed", False):
            lib.tick_capture_take.argtypes = (ctypes.c_void_p, ctypes.c_uint64, ctypes.c_void_p,
                                              ctypes.c_int64)
            lib._typed = True
        weakref.finalize(self, _release, lib, state)    # the rules and tallies are C memory

    # ---- rules --------------------------------------------------------------------------
    def teach_plain(self, lookup: int, cfa_register: str, cfa_offset: int,
                    saved_at: tuple, lost: tuple) -> bool:
        """CFA = cfa_register + cfa_offset; each (register, n) of `saved_at` at CFA + n; the
        registers of `lost` unknown in the caller. Registers the capture does not read are
        left out (no later rule it holds can name them). False when it cannot hold the rule
        (a CFA register it does not read, too many saved): walks through it are declined."""
        index = self.index
        saved_at = tuple((name, offset) for name, offset in saved_at if name in index)
        if cfa_register not in index or len(saved_at) > MAX_SAVED:
            return False
        rule = _Rule(lookup=lookup, kind=RULE_PLAIN, cfa_reg=index[cfa_register],
                     nsaved=len(saved_at), cfa_offset=cfa_offset,
                     lost=sum(1 << index[name] for name in lost if name in index))
        for i, (name, offset) in enumerate(saved_at):
            rule.saved_reg[i], rule.saved_offset[i], rule.saved_base[i] = index[name], offset, -1
        return self._teach(rule)

    def teach_realigned(self, lookup: int, cfa_register: str, cfa_offset: int, saved: tuple,
                        flags: int = 0) -> bool:
        """gcc's realigned frame (i386 main's DRAP): CFA = the word at cfa_register +
        cfa_offset; each (register, base, n) of `saved` at base + n, base a register or None
        for the CFA."""
        index = self.index
        saved = tuple(entry for entry in saved if entry[0] in index)
        if cfa_register not in index or len(saved) > MAX_SAVED \
                or any(base is not None and base not in index for _, base, _ in saved):
            return False
        rule = _Rule(lookup=lookup, kind=RULE_PLAIN, flags=CFA_DEREF | flags, cfa_reg=index[cfa_register],
                     nsaved=len(saved), cfa_offset=cfa_offset)
        for i, (name, base, offset) in enumerate(saved):
            rule.saved_reg[i], rule.saved_offset[i] = index[name], offset
            rule.saved_base[i] = -1 if base is None else index[base]
        return self._teach(rule)

    def teach_signal(self, lookup: int, interrupted: bool, stack_pointer: str, sp_offset: int,
                     saved: tuple) -> bool:
        """A signal frame (a restorer's code at `lookup`, an interrupted PC if `interrupted`,
        else a return address - 1): the caller's SP is the word at stack_pointer + sp_offset
        and each (register, stack_pointer, n) of `saved` at stack_pointer + n (the kernel's
        sigcontext); the caller's PC is an interrupted one, looked up as is, and its SP need
        not be above this frame's (sigaltstack)."""
        flags = SIGNAL_FRAME | (FIRST_ONLY if interrupted else RETURNS_ONLY)
        return self.teach_realigned(lookup, stack_pointer, sp_offset, saved, flags=flags)

    def teach_outermost(self, lookup: int, cfa_register: str | None = None) -> bool:
        """The walk ends at `lookup` (when `cfa_register` is known in the frame, if given)."""
        if cfa_register is not None and cfa_register not in self.index:
            return False
        cfa = -1 if cfa_register is None else self.index[cfa_register]
        return self._teach(_Rule(lookup=lookup, kind=RULE_OUTERMOST, cfa_reg=cfa))

    def teach_no_frame(self, pc: int, stack_pointer: str) -> bool:
        """An interrupted PC with no frame (a `ret`, an i386 PIC thunk): the return address is
        at the stack top. Not for a return address - 1 that happens to equal `pc`."""
        index = self.index
        if stack_pointer not in index:
            return False
        word = self._state.word
        rule = _Rule(lookup=pc, kind=RULE_PLAIN, flags=FIRST_ONLY, cfa_reg=index[stack_pointer],
                     nsaved=1, cfa_offset=word)
        rule.saved_reg[0], rule.saved_offset[0], rule.saved_base[0] = 0, -word, -1
        return self._teach(rule)

    def teach_zero_frame(self, lookup: int, frame_pointer: str) -> bool:
        """No CFI at `lookup`, a return address - 1: the walk ends there when `frame_pointer`
        is 0 (the psABI's mark of the deepest frame), and is declined otherwise."""
        if frame_pointer not in self.index:
            return False
        return self._teach(_Rule(lookup=lookup, kind=RULE_ZERO_FRAME, flags=RETURNS_ONLY,
                                 cfa_reg=self.index[frame_pointer]))

    def _teach(self, rule: _Rule) -> bool:
        return bool(self._lib.tick_capture_teach(ctypes.byref(self._state), ctypes.byref(rule)))

    def forget(self) -> None:
        """Every rule goes (the objects they describe may be gone)."""
        self._lib.tick_capture_forget(ctypes.byref(self._state))

    @property
    def rules(self) -> int:
        return self._state.nrules

    # ---- records ------------------------------------------------------------------------
    def take_stopped(self, machine, pc: int, ts: int) -> int:
        """Take a tick where a run stopped (the host clock's: emu/host_clock.py), not from the
        block clock's hook: the same walk from the registers as they are, recorded with `ts`.
        tick_capture_take's answer: 1 taken, 2 taken and `stop_after` records wait, 0
        declined (`declined` says why; the kernel delivers it through the IDT)."""
        return self._lib.tick_capture_take(handle(machine.uc), pc, self.context, ts)

    def stop_after(self, records: int | None) -> None:
        """Stop the run once `records` are buffered (None: only when the buffer is full)."""
        self._state.stop_after = records or 0

    @property
    def buffered(self) -> int:
        """Words of records waiting to be drained."""
        return self._state.used

    @property
    def declined(self) -> str:
        return DECLINED[self._state.declined]

    def drain(self) -> list[Captured]:
        """The records since the last drain, oldest first; the buffer is empty after."""
        state = self._state
        used = state.used
        state.records = 0           # (the ticks it counts include the histogram's)
        if not used:
            return []
        # The words as one tuple (struct converts them in C), whose slices are the frames'
        # tuples; each record made by tuple.__new__, without the Python frame of a NamedTuple's
        # __new__ (a batch is thousands of records: bench/profile.py's per-sample cost).
        # A record holds only the frames inside those it shares with the record before
        # (native/tick_capture.c shared_with_last): they are taken from that one's.
        words = struct.unpack_from(f"{used}Q", self._buffer)
        state.used = 0
        make, records, i, last = tuple.__new__, [], 0, ()
        while i < used:
            shared = words[i + 2] >> 32
            end = i + 3 + (words[i + 2] & 0xFFFFFFFF) - shared
            frames = words[i + 3:end] + last[len(last) - shared:] if shared else words[i + 3:end]
            records.append(make(Captured, (words[i], words[i + 1], frames, shared)))
            i, last = end, frames
        return records

    def drain_tallies(self) -> list[Tally]:
        """The histogram's tallies since the last drain, in the order of their first ticks;
        the histogram is empty after (the ticks of records that found no room in it come with
        drain()). Their ticks are among those `stop_after` counts: drain both."""
        state = self._state
        n = state.ntallies
        state.records = 0
        if not n:
            return []
        words = struct.unpack_from(f"{3 * n}Q", ctypes.string_at(state.tallies, 24 * n))
        self._lib.tick_capture_clear_tallies(ctypes.byref(state))
        make = tuple.__new__
        return [make(Tally, words[i:i + 3]) for i in range(0, 3 * n, 3)]



def _release(lib, state: _State) -> None:
    lib.tick_capture_release(ctypes.byref(state))
