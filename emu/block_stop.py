"""A stop of the guest run asked from another host thread, taken at the next block's start
(native/block_stop.c): a debugger's Ctrl-C (kernel_model/debug/run.py) and the Python host
ticker's ticks (host_ticker.py).

uc_emu_stop from another thread may end the run just after the store of a read-modify-write
instruction, and Unicorn resumes at that instruction's start: the guest runs it twice
(native/block_stop.c says where Unicorn does so). Here `ask()`, from any thread, only marks the
stop due, and a block hook on each Machine that may run (`arm`, on the Machine's own thread
before it runs: block_hooks.py says why only there) stops the run at the next block it begins
and takes the request. The hook costs every block a call while it is armed (bench/profile.py
measures an empty C block hook), so its user arms it only while a stop can be asked (a debugger
attached, a host clock running).

Where the C helper cannot be built (native/__init__.py), the hook is a Python callback: the
same stops, at several times the cost of a block, which such a host pays rather than a guest
that runs an instruction twice.
"""
from __future__ import annotations

import ctypes

from unicorn import UC_HOOK_BLOCK

from . import native
from .block_hooks import BlockHooks
from .internals.binding import uclib


def _library():
    lib = native.load("block_stop")
    if lib is not None and not getattr(lib, "_typed", False):
        lib.block_stop_new.restype = ctypes.c_void_p
        lib.block_stop_new.argtypes = (ctypes.c_void_p,)
        for name in ("block_stop_ask", "block_stop_withdraw", "block_stop_free"):
            getattr(lib, name).argtypes = (ctypes.c_void_p,)
        lib._typed = True
    return lib


class BlockStop:
    def __init__(self):
        lib = _library()
        self._lib = lib
        if lib is None:
            self._stop = None
            self._python = PythonBlockStop()
            return
        self._stop = lib.block_stop_new(ctypes.cast(uclib.uc_emu_stop, ctypes.c_void_p))
        if not self._stop:
            raise MemoryError("cannot allocate a block stop")
        self._hooks = BlockHooks(ctypes.cast(lib.block_stop_hook, ctypes.c_void_p), self._stop,
                                 "the block stop's")
        self._closed = False

    def arm(self, machine) -> None:
        """`machine` is about to run (on its own thread, outside emu_start): a stop asked from
        now on ends its run at a block's start."""
        if self._stop is None:
            self._python.arm(machine)
        else:
            self._hooks.add(machine)

    def ask(self) -> None:
        """From any host thread: the next block an armed Machine begins ends its run."""
        if self._stop is None:
            self._python.due = True
        else:
            self._lib.block_stop_ask(self._stop)

    def withdraw(self) -> None:
        """A request not taken yet is dropped (its asker took what it wanted between runs)."""
        if self._stop is None:
            self._python.due = False
        else:
            self._lib.block_stop_withdraw(self._stop)

    def close(self) -> None:
        """The hooks go from the Machines still open (on their thread, between runs). The
        request's memory stays until this object goes: a thread that asks late finds it."""
        if self._stop is None:
            self._python.close()
        else:
            self._hooks.remove_all()
            self._closed = True

    def __del__(self):
        """(Never closed: a Machine may still hold a hook on the request, which is kept.)"""
        if getattr(self, "_closed", False):
            self._lib.block_stop_free(self._stop)


class PythonBlockStop:
    """The same hook in Python, where the C helper cannot be built."""

    def __init__(self):
        self.due = False
        self._hooked: list[tuple] = []          # (Machine, its uc when hooked, the hook)

    def arm(self, machine) -> None:
        if any(known is machine and uc is machine.uc for known, uc, _ in self._hooked):
            return
        self._hooked = [entry for entry in self._hooked if entry[0] is not machine]
        hook = machine.uc.hook_add(UC_HOOK_BLOCK, self._on_block)
        machine.uc.ctl_flush_tb()
        self._hooked.append((machine, machine.uc, hook))

    def _on_block(self, uc, _address, _size, _user) -> None:
        if self.due:
            self.due = False
            uc.emu_stop()

    def close(self) -> None:
        for machine, uc, hook in self._hooked:
            if machine.uc is uc:
                uc.hook_del(hook)
        self._hooked = []
