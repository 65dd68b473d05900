"""One C block hook (UC_HOOK_BLOCK: a callback and its user data) kept on each Machine that
may run, for the stops asked from another host thread and taken at a block's start (the host
clock, native/host_clock.c; a debugger's Ctrl-C, native/block_stop.c).

Added on the thread that runs the Machine, between its runs (`add`, before each run): Unicorn's
uc_hook_add appends to the hook list that the CPU walks at each block (uc.c uc_hook_add,
helper_uc_tracecode) with no lock, and the hook reaches only blocks translated after it, so the
translations are flushed, which frees code the CPU may be running (uc.c uc_tb_flush, QEMU's
tb_flush). Neither may happen from another thread while the Machine runs: the hook must be there
before the stop is asked, which is why a stop cannot add it itself.
"""
from __future__ import annotations

import ctypes

from unicorn import UC_HOOK_BLOCK

from .internals.binding import handle, uc_hook_h, uclib


class BlockHooks:
    def __init__(self, callback: ctypes.c_void_p, user_data: int, what: str):
        self._callback = callback
        self._user_data = ctypes.c_void_p(user_data)
        self._what = what                   # for the error: "the host clock's"
        # (a Machine, its uc when hooked, the hook) per Machine that ran: kept until
        # remove_all, which takes the hooks off those still open (a run has a few Machines:
        # one per address space), by identity (ids are reused once objects are freed)
        self._hooked: list[tuple] = []

    def add(self, machine) -> None:
        """`machine` is about to run: its hook is there (added at its first run, with its
        translations flushed so that every block calls it)."""
        if any(known is machine and uc is machine.uc for known, uc, _ in self._hooked):
            return
        self._hooked = [entry for entry in self._hooked if entry[0] is not machine]
        self._hooked.append((machine, machine.uc, self._hook(machine.uc)))

    def _hook(self, uc) -> uc_hook_h:
        hook = uc_hook_h()
        status = uclib.uc_hook_add(handle(uc), ctypes.byref(hook), UC_HOOK_BLOCK, self._callback,
                                   self._user_data, ctypes.c_uint64(1), ctypes.c_uint64(0))
        if status:
            raise OSError(f"cannot add {self._what} block hook (uc_err {status})")
        uc.ctl_flush_tb()
        return hook

    def remove_all(self) -> None:
        """The hooks go from the Machines still open (before their user data is freed)."""
        for machine, uc, hook in self._hooked:
            if machine.uc is uc:                # (a closed Machine's uc is gone with its hooks)
                uclib.uc_hook_del(handle(uc), hook)
        self._hooked = []
