"""The timer's tick taken at the interrupt, in C (emu/tick_capture.py), for a sampling tool.

A tool that arms the timer with a capture ("pc" or "stack") gets most of its ticks without the
kernel's full delivery: the C handler on the timer's gate records the PC, the SP and (stack
mode) the return addresses into a buffer, as perf's interrupt handler records samples into its
ring buffer, and the kernel hands the records to the tool as ticks before anything else
happens: at every entry into the kernel (a system call, a trap), at the end of each run, and
when `batch` records are waiting (the tool's wish: 1 = every tick at once). Their frames are
CapturedFrame: the trap frame's IP and SP, and `stack` — registers are not live any more.

The C handler walks stacks with rules the tool teaches it (`learn`), learned from the tool's own
walks of ticks it had to take live. A tick the handler cannot take exactly (no rule, memory it
cannot read...) is delivered the ordinary way, through the IDT with live registers, at the very
instruction: the stacks are the same either way, only their cost differs (bench/profile.py).

In PC mode the tool may ask for a histogram instead (`histogram`: it only counts samples per PC):
the C handler counts the ticks per PC, and the kernel hands over one (PC, count, time of the
first) a distinct PC when it would have handed over the records — before anything that could
change the image map the PC is named against.

Rules describe the objects mapped in an address space: each Space has its own capture (not each
Machine: a recycled Machine serves another program), and the door makes it forget its rules
when an object is mapped or unmapped there.
"""
from __future__ import annotations

import weakref
from typing import NamedTuple

from emu import tick_capture

CAPTURES = ("pc", "stack")
# A rule's kind -> the TickCapture method that teaches it
TEACH = {"plain": "teach_plain", "realigned": "teach_realigned", "outermost": "teach_outermost",
         "zero-frame": "teach_zero_frame", "no-frame": "teach_no_frame", "signal": "teach_signal"}
# The registers a callee preserves (psABI: x86-64 3.2.1 Figure 3.4; i386 2.2.1), and what a walk
# reads: the IP, the SP, then those, which a CFI rule may name as saved or as the CFA's base.
CALLEE_SAVED = {64: ("rbx", "rbp", "r12", "r13", "r14", "r15"), 32: ("ebx", "esi", "edi", "ebp")}
WALK_REGISTERS = {64: ("rip", "rsp", *CALLEE_SAVED[64]), 32: ("eip", "esp", *CALLEE_SAVED[32])}


class CapturedFrame(NamedTuple):
    """A tick the C handler took, as a timer_tick subscriber receives it."""
    vector: int
    ip: int                          # the interrupted PC
    sp: int                          # the interrupted stack pointer
    stack: tuple[int, ...] | None    # the PC then return addresses, complete (stack mode)
    ts: int = 0                      # the tick's virtual time (timer_instructions at the tick)
    # the outermost frames of `stack` that are the previous CapturedFrame's of the same batch
    # (never either's PC): a tool naming stacks may take their names from it
    shared: int = 0


class TickTally(NamedTuple):
    """The ticks a capture's histogram counted at one PC of a thread between two hand-overs."""
    ip: int                          # the interrupted PC
    count: int
    ts: int                          # the first tick's virtual time


def available() -> bool:
    return tick_capture.available()


class TimerCapture:
    """The C tick handler of each address space the timer runs, made at its first run."""

    def __init__(self, mode: str, batch: int | None, histogram: bool = False):
        if mode not in CAPTURES:
            raise ValueError(f"capture {mode!r}: expected one of {', '.join(CAPTURES)}")
        if histogram and mode != "pc":
            raise ValueError("a histogram counts PCs: capture 'pc' only")
        self.mode, self.batch, self.histogram = mode, batch, histogram
        self._captures: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
        self._taught: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()

    def of(self, space) -> tick_capture.TickCapture:
        capture = self._captures.get(space)
        if capture is None:
            bits = space.machine.arch.bits
            capture = self._captures[space] = tick_capture.TickCapture(
                space.machine, WALK_REGISTERS[bits], CALLEE_SAVED[bits], stack=self.mode == "stack",
                histogram=self.histogram)
            capture.stop_after(self.batch)
            self._taught[space] = set()
        return capture

    def learn(self, space, lookup: int, rule: tuple) -> None:
        """Teach the handler of `space` the walk's rule at `lookup`: ("plain", CFA register,
        CFA offset, ((register, CFA offset), ...), (lost register, ...)), ("realigned", CFA
        register, offset, ((register, base register or None, offset), ...)), ("outermost",
        CFA register or None), ("zero-frame", frame pointer) for a return address in code
        without CFI, ("no-frame", stack pointer) for an interrupted PC whose return address
        is on the stack top, or ("signal", interrupted, stack pointer, offset, ((register,
        stack pointer, offset), ...)) for a signal frame (the registers the kernel saved, the
        next PC an interrupted one). Each once (until forgotten)."""
        if self.mode != "stack":
            return
        taught = self._taught.get(space)
        if taught is not None and lookup in taught:
            return
        teach = getattr(self.of(space), TEACH[rule[0]])
        teach(lookup, *rule[1:])
        self._taught[space].add(lookup)

    def forget(self, space) -> None:
        """The objects mapped in `space` changed: its rules may describe what is gone."""
        capture = self._captures.get(space)
        if capture is not None:
            capture.forget()
            self._taught[space] = set()
