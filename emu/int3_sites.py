"""The int3 sites a C interrupt hook takes without the Python interrupt hook (issue 31).

native/int3_sites.c replaces the Machine's interrupt hook once a first site is set
(`Machine.int3_sites()`): an int3 raised in ring 3 at an address of its table, while armed,
calls that site's `hit()` (one Python function: the probe's hooks) and resumes at the IP it
gives; every other interrupt, and every int3 when disarmed or elsewhere, goes to the Machine's
Python hook exactly as before. So the table is an accelerator only: the kernel keeps its own
(Python) redirect for each site, and whatever this path declines takes that one.

What the kernel must keep true (kernel_model/cpu/traps.py): a site is in the table only while
the #BP handler it stands in for is the one the kernel would call, and `armed` only while
nothing else must see the int3 first (a tool's gate on the space, the profiler's
on_kernel_entry). `hit()` returns the IP to resume at, or 0 when it raised: the exception is
kept on the Uc (raw_hooks.hook_failed) and the run stops with EIP where the int3 left it.
"""
from __future__ import annotations

import ctypes
import weakref

from unicorn import UC_HOOK_INTR

from . import native
from .internals.binding import HOOK_INTR_CFUNC, handle, uc_hook_h, uclib
from .raw_hooks import hook_failed

# A site's hit: no argument (the site is the function), the IP to resume at (0: it failed)
HIT_CFUNC = ctypes.CFUNCTYPE(ctypes.c_uint64)


class _Site(ctypes.Structure):
    _fields_ = [("address", ctypes.c_uint64), ("hit", ctypes.c_void_p), ("count", ctypes.c_void_p)]


class _State(ctypes.Structure):
    """struct int3_sites of native/int3_sites.c, field for field."""
    _fields_ = [("eip", ctypes.c_void_p), ("cs", ctypes.c_void_p), ("pc_mask", ctypes.c_uint64),
                ("armed", ctypes.c_int32), ("kernel_entry", ctypes.c_int32),
                ("fallback", ctypes.c_void_p), ("taken", ctypes.c_uint64),
                ("table", ctypes.c_void_p), ("mask", ctypes.c_uint64), ("used", ctypes.c_uint64),
                ("clock", ctypes.c_void_p)]


def available() -> bool:
    """The C hook can be built and the CPU state's EIP and CS are located (cpu_state.py)."""
    return native.load("int3_sites") is not None


class Int3Sites:
    """The C interrupt hook of one Machine and its table of sites (module docstring)."""

    def __init__(self, machine, python_hook):
        """`python_hook`: the Machine's raw interrupt hook (a ctypes function carrying its
        `hook_handle`), which this one replaces in Unicorn and calls for the rest."""
        lib = native.load("int3_sites")
        if lib is None:
            raise RuntimeError(native.unavailable["int3_sites"])
        self._lib, self._uc = lib, machine.uc
        views = machine.cpu_state
        self._state = state = _State()
        state.eip = ctypes.addressof(views.eip)
        state.cs = ctypes.addressof(views.cs)
        state.pc_mask = (1 << machine.arch.bits) - 1
        state.fallback = ctypes.cast(python_hook, ctypes.c_void_p)
        state.armed = 1
        state.clock = ctypes.addressof(machine.clock_parts)     # the Machine keeps it
        self._python_hook = python_hook
        self._hits: dict[int, object] = {}        # address -> its HIT_CFUNC (kept alive)
        # functions of sites cleared: one may be the very hit that cleared it (a probe's action
        # that takes its probe off), still running, so they are let go only between runs
        self._retired: list = []
        self.installed = False
        weakref.finalize(self, lib.int3_sites_free, ctypes.byref(state))

    def install(self) -> None:
        """Put the C hook in the Python hook's place in Unicorn. Only between runs: Unicorn
        walks its list of interrupt hooks after each one returns, so a hook added inside an
        interrupt's hook (a probe placed in an `int 0x80` system call) would get the same
        interrupt too, and hand it to the Python hook a second time (the call made twice)."""
        hook = uc_hook_h()
        status = uclib.uc_hook_add(handle(self._uc), ctypes.byref(hook), UC_HOOK_INTR,
                                   ctypes.cast(self._lib.int3_sites_on_interrupt, ctypes.c_void_p),
                                   ctypes.cast(ctypes.byref(self._state), ctypes.c_void_p),
                                   ctypes.c_uint64(1), ctypes.c_uint64(0))
        if status != 0:
            raise RuntimeError(f"cannot add the C interrupt hook: error {status}")
        # Unicorn calls every interrupt hook: the Python one goes (this one calls it)
        uclib.uc_hook_del(handle(self._uc), self._python_hook.hook_handle)
        self.installed = True

    def failed(self, error: BaseException) -> None:
        """What a site's `hit` does with an exception: kept on the Uc, the run stops."""
        hook_failed(self._uc, error)

    def kernel_entry(self, present: bool) -> None:
        """The Machine has an on_kernel_entry (or no longer): while it has, every int3 goes
        to the Python hook, which calls it first."""
        self._state.kernel_entry = int(present)

    @property
    def state_kernel_entry(self) -> bool:
        """The C hook's view: the Machine has an on_kernel_entry."""
        return bool(self._state.kernel_entry)

    @property
    def taken(self) -> int:
        """int3s this hook took at a site (the others went to the Python hook)."""
        return self._state.taken

    @property
    def armed(self) -> bool:
        return bool(self._state.armed)

    @armed.setter
    def armed(self, value: bool) -> None:
        self._state.armed = int(bool(value))

    def __contains__(self, address: int) -> bool:
        return address in self._hits

    def __len__(self) -> int:
        return len(self._hits)

    def holds(self, address: int) -> bool:
        """The C table itself holds `address` (what `in` answers from the Python side)."""
        return bool(self._lib.int3_sites_holds(ctypes.byref(self._state), ctypes.c_uint64(address)))

    def set(self, address: int, hit, count: ctypes.c_uint64 | None = None) -> bool:
        """Take the int3 at `address` here: `hit()` runs the site's work and gives the IP to
        resume at; it catches its own exceptions and hands them to `failed`, then gives 0 (a
        wrapper doing it would be a Python frame more a hit). `count`, when given, is added
        one for each hit that gave an IP (the caller keeps it alive). False when the table
        could not grow (the Python path keeps the site)."""
        function = HIT_CFUNC(hit)
        counter = None if count is None else ctypes.cast(ctypes.byref(count), ctypes.c_void_p)
        if not self._lib.int3_sites_set(ctypes.byref(self._state), ctypes.c_uint64(address),
                                        ctypes.cast(function, ctypes.c_void_p), counter):
            self.clear(address)
            return False
        self._hits[address] = function
        return True

    def clear(self, address: int) -> None:
        """The int3 at `address` goes to the Python hook again."""
        function = self._hits.pop(address, None)
        if function is not None:
            self._lib.int3_sites_clear(ctypes.byref(self._state), ctypes.c_uint64(address))
            self._retired.append(function)

    def release_retired(self) -> None:
        """Let the cleared sites' functions go (the Machine calls it before a run: no hit is
        running then)."""
        self._retired.clear()

    def clear_all(self) -> None:
        for address in list(self._hits):
            self.clear(address)
