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

from unicorn import UC_HOOK_BLOCK

from . import native
from .internals.binding import handle, uc_hook_h, uclib


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
        self._block = ctypes.cast(lib.host_clock_block, ctypes.c_void_p)
        # (a Machine, its uc when hooked, the hook) per Machine that ran: kept until close,
        # which removes the hooks from those still open (a run has a few Machines: one per
        # address space)
        self._hooked: list[tuple] = []

    @property
    def fired(self) -> int:
        """Ticks raised (taken or not)."""
        return self._lib.host_clock_fired(self._clock)

    def running(self, machine) -> None:
        """`machine` goes into emu_start: a tick from now on stops it (its block hook, added at
        its first run, with its translations flushed so that every block calls it)."""
        if any(known is machine and uc is machine.uc for known, uc, _ in self._hooked):
            return
        self._hooked = [entry for entry in self._hooked if entry[0] is not machine]
        self._hooked.append((machine, machine.uc, self._hook(machine.uc)))

    def idle(self) -> None:
        """(The block hooks stay: a Machine that does not run begins no block.)"""

    def _hook(self, uc) -> uc_hook_h:
        hook = uc_hook_h()
        status = uclib.uc_hook_add(handle(uc), ctypes.byref(hook), UC_HOOK_BLOCK, self._block,
                                   ctypes.c_void_p(self._clock), ctypes.c_uint64(1), ctypes.c_uint64(0))
        if status:
            raise OSError(f"cannot add the host clock's block hook (uc_err {status})")
        uc.ctl_flush_tb()
        return hook

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
        for machine, uc, hook in self._hooked:
            if machine.uc is uc:                # (a closed Machine's uc is gone with its hooks)
                uclib.uc_hook_del(handle(uc), hook)
        self._hooked = []
        self._lib.host_clock_close(self._clock)
        self._clock = None


def start(period_s: float) -> NativeHostTicker | None:
    """The C clock, or None where its helper cannot be built."""
    lib = _library()
    return NativeHostTicker(lib, period_s) if lib is not None else None
