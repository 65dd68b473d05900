"""The parts of a Machine's instruction clock, published where C reads them (issue 31).

Machine.read_clock() is `total` of the shared InstructionClock plus the live count of the run
under way (the block clock's `executed - offset`, or Unicorn's own counter), as Python
attributes. An int3 hit taken by the C interrupt hook (int3_sites.py) needs that value for its
record's `ts`; reading it through read_clock was a Python frame and seven attribute loads a hit,
a fifth of the hit (bench/probe_rate.py's (a)). So the Machine publishes the same parts here, in
one C struct, at each point where one of them changes (a run's start and end, reset, a new
clock, the block count's begin and fault_at), and native/int3_sites.c computes the same sum
into `hit_ts` before it calls a site's hit, -1 after: a probe's entry hook reads `hit_ts` (one
ctypes load) and calls read_clock only when it is -1 (not inside a C hit, or a part C cannot
read: Unicorn's counter not located). Any run's start or end sets `hit_ts` to -1, so a hook that
runs after another hook of the same hit ran the guest (a nested run) reads the clock again.
"""
from __future__ import annotations

import ctypes


class ClockParts(ctypes.Structure):
    """struct clock_parts of native/int3_sites.c, field for field."""
    _fields_ = [("total", ctypes.c_void_p),      # int64_t *: InstructionClock.cell (0: no clock)
                ("executed", ctypes.c_void_p),   # int64_t *: the block clock's count
                ("insns", ctypes.c_void_p),      # uint64_t *: Unicorn's count (0: not located)
                ("offset", ctypes.c_int64),      # the block count's offset (lazy_count.py)
                ("running", ctypes.c_int32),     # Machine._running
                ("blocks", ctypes.c_int32),      # the live count is the block count
                ("hit_ts", ctypes.c_int64)]      # the clock at the C hit under way, else -1


def new_clock_parts() -> ClockParts:
    parts = ClockParts()
    parts.hit_ts = -1
    return parts


def hit_clock_view(parts: ClockParts) -> ctypes.c_int64:
    """`parts.hit_ts` as a ctypes integer over the field: `.value` reads it without building
    the struct's field descriptor call chain (one load a hit)."""
    return ctypes.c_int64.from_buffer(parts, ClockParts.hit_ts.offset)


def publish(parts: ClockParts, machine) -> None:
    """Copy what Machine.read_clock reads (emu/machine.py) into `parts`; the clock at a hit is
    unknown until the next C hit computes it."""
    parts.hit_ts = -1
    icount = machine.icount
    parts.total = None if icount is None else ctypes.addressof(icount.cell)
    parts.running = int(machine._running)
    blocks = machine._blocks
    parts.blocks = int(blocks is not None and machine._live is blocks)
    if blocks is not None:
        parts.executed = ctypes.addressof(blocks.executed)
        parts.offset = blocks.offset
    insns = machine._insns
    parts.insns = ctypes.addressof(insns) if isinstance(insns, ctypes.c_uint64) else None
