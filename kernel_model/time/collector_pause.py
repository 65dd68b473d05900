"""The cyclic garbage collector waits while a batch of captured ticks is handed over (issue 31).

A batch is up to a few thousand records (the capture's buffer: emu/tick_capture.py), and each
becomes several tuples on its way to the tool — the drained record, the CapturedFrame, the
sampler's Sample and Interrupt — of which the tool keeps some (a profile keeps every Sample and
its named stack). CPython starts a collection of the youngest generation every 700 container
allocations net of frees (gc.get_threshold), so a batch set off several, each promoting what it
found alive, and the older generations followed: a fib 30 stack profile ran ~35 collections,
most of them in the hand-over, where it runs ~4 with the collector paused (bench/profile.py).
The records form no reference cycles, so a collection in the middle of a batch can free
nothing that the batch's end would not free by reference counting: the collector only
waits, and the allocations that remain count towards its next start as usual.
"""
from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def collector_paused():
    """No automatic collection inside; the collector as it was after (a caller that
    disabled it keeps it disabled)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
