"""The tool traps a space may raise and whose handlers take them (part of the debug interface,
kernel_model/debug/): int3 breakpoints (US 9,336,001: the kernel's #BP handler calls the
tool's) and their fast-path redirects, LOCK-prefix #UD sites (US 7,350,196), #DB handlers,
and gates on shared address spaces (US 7,185,320, facade.py's docstring). Keyed on
`space.serial`; a fork child's space gets its parent's handlers (copy_traps), a released or
detached one loses them (forget_traps).

It also counts the tool traps the kernel took, per kind, for the tools that measure what
instrumentation costs (trapline experiment's traps_taken): "int3" (a #BP whose frame went to a
tool's handler), "int3_fast" (one its redirect took without a frame: still an int3 the CPU
raised, SDM Vol. 3A 6.12.1, only the frame is elided), "lock_ud" (a LOCK-prefix site's #UD)
and "step_db" (a #DB a tool claimed). The program's own traps are not counted. The counts
depend only on the guest's execution, so they are as deterministic as the run.
"""
import ctypes
import functools
from collections import Counter

from ..errors import KernelError


class ToolTraps:
    def __init__(self, kernel=None):
        self._kernel = kernel                                   # names the trapping thread
        self._gates: dict[int, object] = {}                     # space.serial -> gate
        self._breakpoints: dict[tuple[int, int], object] = {}   # (space.serial, address) -> handler
        self._invalid_opcodes: dict[tuple[int, int], object] = {}  # LOCK-prefix #UD sites
        self._debug_traps: dict[int, object] = {}                 # space.serial -> #DB handler
        self._taken: Counter = Counter()                          # kind -> tool traps taken
        # "int3_fast" hits the Machines' C interrupt hooks took: counted there, in C, a Python
        # dict increment a hit less (issue 31); added to _taken's when asked
        self._native_int3_fast = ctypes.c_uint64()

    # ---- what the tools' traps cost (the module docstring) ------------------------------------
    def tool_trap_taken(self, kind: str) -> None:
        """The kernel gave a trap of `kind` to a tool's handler (kernel_model/idt_handlers.py)."""
        self._taken[kind] += 1

    def tool_traps_taken(self) -> dict[str, int]:
        """Tool traps taken so far in the run, per kind (those taken at least once)."""
        taken = self._taken.copy()
        taken["int3_fast"] += self._native_int3_fast.value
        return {kind: n for kind, n in sorted(taken.items()) if n}

    # ---- kernel breakpoint handlers (US 9,336,001: the kernel's #BP handler calls the tool's) ----
    def register_breakpoint(self, space, address: int, handler) -> None:
        """`handler(frame, thread) -> bool` runs when the int3 at `address` in `space` traps;
        it may rewrite frame.ip (IRET then resumes there). True: the guest goes on at once."""
        self._breakpoints[(space.serial, address)] = handler
        # a native breakpoint stood in for the handler registered before (if another)
        traps = getattr(space, "traps", None)
        if traps is not None:
            traps.clear_native_breakpoint(address)

    def unregister_breakpoint(self, space, address: int) -> None:
        self._breakpoints.pop((space.serial, address), None)
        self.unregister_breakpoint_redirect(space, address)

    def breakpoint_at(self, space, address: int):
        handler = self._breakpoints.get((space.serial, address))
        if self._gates and handler is not None:
            return self._gated(space, handler, address)
        return handler

    def _gated(self, space, handler, address: int):
        gate = self._gates.get(space.serial)
        return handler if gate is None else functools.partial(gate, handler, address)

    # ---- breakpoint redirects (the int3 fast path, kernel_model/cpu/traps.py) --------------------
    def register_breakpoint_redirect(self, space, address: int, redirect) -> None:
        """For a breakpoint handler (registered first, `register_breakpoint`) that does nothing
        to the trap frame but rewrite its saved IP: `redirect(thread) -> int | None` gives the
        IP the handler would write (running the tool's hooks on the way), or None, before doing
        anything, to send this hit through the full path. The kernel may then take the int3
        without materialising the frame.

        Why that is exact: the frame round trip of a ring-3 int3 through a present DPL-3 gate is
        the identity on everything but the IP (SDM Vol. 3A 6.12.1, IRET's return to the outer
        level); the only difference is the five frame words not written below the thread's
        kernel stack top, memory dead between traps. kernel_model/cpu/traps.py states the argument
        and checks the gate on every use; this interface adds the other precondition: the
        redirect is taken only while the handler it stands in for is still the one the kernel
        would call for the address (breakpoint_at: not replaced by another tool, not behind a
        gate), otherwise the hit goes the full path to whatever is registered now.
        A space without a trap dispatcher (a tool's stand-in), or an interface without a kernel
        to name the trapping thread, keeps the full path only: equivalent, just slower."""
        traps, kernel, handler = self._redirect_parts(space, address)
        if traps is None:
            return
        # breakpoint_at's question, asked on every hit without a call: is `handler` (this very
        # object) still registered, and no gate on the space?
        breakpoints, gates, taken = self._breakpoints, self._gates, self._taken
        space_id = space.serial
        key = (space_id, address)

        def stand_in():
            if breakpoints.get(key) is not handler or (gates and space_id in gates):
                return None
            ip = redirect(kernel.current)
            if ip is not None:          # None: the full path takes it (and counts it there)
                taken["int3_fast"] += 1
            return ip
        traps.set_breakpoint_redirect(address, stand_in)

    def _redirect_parts(self, space, address: int):
        """(traps, kernel, handler) for a stand-in at `address`: the space's trap dispatcher and
        the kernel (None, None when either is missing: the full path only), and the breakpoint
        handler the stand-in is valid for (KernelError without one)."""
        handler = self._breakpoints.get((space.serial, address))
        if handler is None:
            raise KernelError(f"breakpoint redirect at {address:#x} without a breakpoint handler")
        traps = getattr(space, "traps", None)
        if traps is None or self._kernel is None:
            return None, None, handler
        return traps, self._kernel, handler

    def register_breakpoint_trampoline(self, space, address: int, site) -> None:
        """register_breakpoint_redirect for the usual redirect, resolved into one function: at
        each hit, every callable of `site.hooks` is called with (thread, address), in order,
        then the thread resumes at `site.trampoline` (both read at the hit: the tool may change
        them at any time). Equivalent to registering `redirect(thread)` that does the same, one
        call fewer a hit (issue 31: a hit's Python frames are most of a probe record's cost,
        bench/trace_cost.py). The breakpoint handler it stands in for must do nothing else."""
        traps, kernel, handler = self._redirect_parts(space, address)
        if traps is None:
            return
        # breakpoint_at's question, asked on every hit without a call: is `handler` (this very
        # object) still registered, and no gate on the space?
        breakpoints, gates, taken = self._breakpoints, self._gates, self._taken
        space_id = space.serial
        key = (space_id, address)

        def stand_in():
            # register_breakpoint_redirect's stand_in with the redirect inlined
            if breakpoints.get(key) is not handler or (gates and space_id in gates):
                return None
            thread = kernel.current
            for hook in site.hooks:
                hook(thread, address)
            taken["int3_fast"] += 1
            return site.trampoline

        failed = traps.native_failed

        def native_hit():
            # stand_in for the Machine's C interrupt hook, which calls it only while stand_in's
            # questions have the answer "take it": the handler is still this one (set and
            # unregister clear the C table's entry), no gate on the space (set_gate disarms it);
            # the C hook counts the hit as "int3_fast" when it gives an IP
            try:
                thread = kernel.current
                for hook in site.hooks:
                    hook(thread, address)
                return site.trampoline
            except BaseException as error:        # noqa: B036 - re-raised by the run
                failed(error)
                return 0
        traps.set_native_breakpoint(address, stand_in, native_hit, self._native_int3_fast)

    @staticmethod
    def unregister_breakpoint_redirect(space, address: int) -> None:
        traps = getattr(space, "traps", None)
        if traps is not None:
            traps.clear_breakpoint_redirect(address)

    # ---- gates on shared address spaces -----------------------------------------------------
    def set_gate(self, space, gate) -> None:
        """`gate(handler, address, frame, thread) -> bool` sees every tool trap of `space`."""
        self._gates[space.serial] = gate
        self._arm_native(space, False)

    def clear_gate(self, space) -> None:
        self._gates.pop(space.serial, None)
        self._arm_native(space, True)

    @staticmethod
    def _arm_native(space, armed: bool) -> None:
        """The C hook takes a space's int3s only while no gate must see them first."""
        traps = getattr(space, "traps", None)
        if traps is not None:
            traps.arm_native_breakpoints(armed)

    # ---- #UD sites (US 7,350,196: a LOCK prefix patched over a probed instruction) ----------------
    def register_invalid_opcode_site(self, space, address: int, handler) -> None:
        """`handler(frame, thread) -> bool` runs when the LOCK patch at `address` raises #UD
        (a fault: frame.ip == address); like a breakpoint handler it may rewrite the frame.
        Unicorn needs to be told where such patches sit (emu/machine.py trap_lock_prefix)."""
        self._invalid_opcodes[(space.serial, address)] = handler
        space.machine.trap_lock_prefix(address)

    def unregister_invalid_opcode_site(self, space, address: int) -> None:
        if self._invalid_opcodes.pop((space.serial, address), None) is not None:
            space.machine.untrap_lock_prefix(address)

    def invalid_opcode_site(self, space, address: int):
        handler = self._invalid_opcodes.get((space.serial, address))
        if self._gates and handler is not None:
            return self._gated(space, handler, address)
        return handler

    # ---- #DB (single-step traps, TF in the saved flags) ---------------------------------------
    def register_debug_trap(self, space, handler) -> None:
        """`handler(frame, thread) -> bool | None` sees every #DB of `space` first; None means
        "not mine" and the trap takes its usual course (SIGTRAP)."""
        self._debug_traps[space.serial] = handler

    def debug_trap_handler(self, space):
        return self._debug_traps.get(space.serial)

    # ---- lifecycle (the kernel's fork path, a detached child, space release) -----------------
    def forget_traps(self, space) -> None:
        """Every handler and the gate of `space` go: its traps, if any were left, would be the
        program's own."""
        key = space.serial
        for site in [k for k in self._breakpoints if k[0] == key]:
            del self._breakpoints[site]
            self.unregister_breakpoint_redirect(space, site[1])
        for site in [k for k in self._invalid_opcodes if k[0] == key]:
            self.unregister_invalid_opcode_site(space, site[1])
        self._debug_traps.pop(key, None)
        if self._gates.pop(key, None) is not None:
            self._arm_native(space, True)

    def copy_traps(self, parent_space, child_space) -> None:
        """fork: the child's copy of the memory holds the same int3s (and LOCK patches): the
        same handlers (and the child's Machine the same #UD sites)."""
        for (space_id, address), handler in list(self._breakpoints.items()):
            if space_id == parent_space.serial:
                self._breakpoints[(child_space.serial, address)] = handler
        for (space_id, address), handler in list(self._invalid_opcodes.items()):
            if space_id == parent_space.serial:
                self.register_invalid_opcode_site(child_space, address, handler)
        if parent_space.serial in self._debug_traps:
            self._debug_traps[child_space.serial] = self._debug_traps[parent_space.serial]
