"""The host clock in C (native/host_clock.c): HostTicker's ticks, from a thread that runs no
Python.

Same meaning as emu/host_ticker.py's HostTicker (a tick every `period` seconds of the process's
CPU time, perf's cpu-clock; it stops the Machine inside emu_start and asks again while the tick
is not taken), and the same methods. The difference is the cost: HostTicker's Python thread
needs the GIL at each wake-up, which the run loop holds between runs, so the two threads
handed it back and forth around every tick; this thread calls uc_emu_stop itself and never
takes the GIL (the C file says more). `start(period)` gives None where the C helper cannot be
built (native/__init__.py): the caller then uses HostTicker.
"""
from __future__ import annotations

import ctypes

from . import native
from .internals.binding import handle, uclib

RETRY_NS = 500_000           # a due tick not taken yet: stop the run again after this long


def _library():
    lib = native.load("host_clock")
    if lib is not None and not getattr(lib, "_typed", False):
        lib.host_clock_start.restype = ctypes.c_void_p
        lib.host_clock_start.argtypes = (ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p)
        lib.host_clock_running.argtypes = (ctypes.c_void_p, ctypes.c_void_p)
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
        self._clock = lib.host_clock_start(int(period_s * 1e9), RETRY_NS, stop)
        if not self._clock:
            raise OSError("cannot start the host clock's thread")

    @property
    def fired(self) -> int:
        """Ticks raised (taken or not)."""
        return self._lib.host_clock_fired(self._clock)

    def running(self, machine) -> None:
        """`machine` goes into emu_start: a tick from now on stops it."""
        self._lib.host_clock_running(self._clock, handle(machine.uc))

    def idle(self) -> None:
        self._lib.host_clock_running(self._clock, None)

    def take(self) -> bool:
        """Whether a tick is due (and it is taken: the caller delivers it)."""
        return bool(self._lib.host_clock_take(self._clock))

    def elapsed_ns(self) -> int:
        """CPU time of the process since the clock started, in nanoseconds (a sample's time)."""
        return self._lib.host_clock_elapsed(self._clock)

    def close(self) -> None:
        if self._clock:
            self._lib.host_clock_close(self._clock)
            self._clock = None


def start(period_s: float) -> NativeHostTicker | None:
    """The C clock, or None where its helper cannot be built."""
    lib = _library()
    return NativeHostTicker(lib, period_s) if lib is not None else None
