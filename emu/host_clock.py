"""The host clock in C (native/host_clock.c): HostTicker's ticks, from a thread that runs no
Python, taken at a block's start by a C block hook.

Same meaning as emu/host_ticker.py's HostTicker (a tick every `period` seconds of the process's
CPU time, perf's cpu-clock; it stops the Machine inside emu_start) and the same methods. The
difference is the cost, and where the run stops: HostTicker's Python thread needs the GIL at
each wake-up, which the run loop holds between runs, and stops the run from its thread; this
thread never takes the GIL and only marks the tick due, and a block hook on each Machine the
clock runs (`running`) stops the run at the next block it begins. A stop asked from another
thread lands wherever Unicorn next checks for one, which may be just after a store: the guest
then runs that instruction again (the C file says more). `start(period)` gives None where the
C helper cannot be built (native/__init__.py): the caller then uses HostTicker.
"""
from __future__ import annotations

import ctypes

from . import native
from .block_hooks import BlockHooks
from .internals.binding import uclib


def _library():
    lib = native.load("host_clock")
    if lib is not None and not getattr(lib, "_typed", False):
        lib.host_clock_start.restype = ctypes.c_void_p
        lib.host_clock_start.argtypes = (ctypes.c_int64, ctypes.c_void_p)
        lib.host_clock_take.argtypes = (ctypes.c_void_p,)
        for name in ("host_clock_fired", "host_clock_elapsed"):
            getattr(lib, name).argtypes = (ctypes.c_void_p,)
            getattr(lib, name).restype = ctypes.c_int64
        lib.host_clock_close.argtypes = (ctypes.c_void_p,)
        lib._typed = True
    return lib


class NativeHostTicker:
    def __init__(self, lib, period_s: float):
        if period_s <= 0:
            raise ValueError(f"host clock period must be positive, not {period_s}")
        self.period = period_s
        self._lib = lib
        stop = ctypes.cast(uclib.uc_emu_stop, ctypes.c_void_p)
        self._clock = lib.host_clock_start(int(period_s * 1e9), stop)
        if not self._clock:
            raise OSError("cannot start the host clock's thread")
        self._hooks = BlockHooks(ctypes.cast(lib.host_clock_block, ctypes.c_void_p), self._clock,
                                 "the host clock's")

    @property
    def fired(self) -> int:
        """Ticks raised (taken or not)."""
        return self._lib.host_clock_fired(self._clock)

    def running(self, machine) -> None:
        """`machine` goes into emu_start: a tick from now on stops it (block_hooks.py)."""
        self._hooks.add(machine)

    def idle(self) -> None:
        """(The block hooks stay: a Machine that does not run begins no block.)"""

    def take(self) -> bool:
        """Whether a tick is due (and it is taken: the caller delivers it)."""
        return bool(self._lib.host_clock_take(self._clock))

    def elapsed_ns(self) -> int:
        """CPU time of the process since the clock started, in nanoseconds (a sample's time)."""
        return self._lib.host_clock_elapsed(self._clock)

    def close(self) -> None:
        """The hooks go from the Machines still open (their user data is the clock's memory,
        freed here), and the thread ends."""
        if not self._clock:
            return
        self._hooks.remove_all()
        self._lib.host_clock_close(self._clock)
        self._clock = None


def start(period_s: float) -> NativeHostTicker | None:
    """The C clock, or None where its helper cannot be built."""
    lib = _library()
    return NativeHostTicker(lib, period_s) if lib is not None else None
