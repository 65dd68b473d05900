"""The relocate strategy (US 6,957,421: US 6,957,421 function relocation, US 6,898,785 original-
space return pointers).

Placing a probe anywhere in a function (blocks.py finds its reachable code, or says
why it cannot be relocated) puts, through the door's patches, an *instrumentation breakpoint*
(int3) on the function's first instruction and one on every return address of its calls
(returns.py). The instrumented copy (copy.py: every probe of the function
inlined as a call-out int3 or a native part, internal branches retargeted, every instruction
relocated) is laid out and its slot reserved in the XOL pages (a tool area, "[uprobes]")
when the probe is placed — mapping pages from inside a trap is what Unicorn does not like
(docs/unicorn.md 8) — and written when the entry breakpoint is first reached: that hit, and
every later entry from original code, moves the thread's PC into the copy, where it stays
until the function returns or leaves by a branch to original code.

A probe added to a relocated function rebuilds the copy in a new slot (the new copy serves the
next entries); one removed rebuilds it too, and the last one removed takes every breakpoint
out. An old copy stays mapped until no thread's PC (live or in a signal frame) is in it: no
stack holds a copy address, since calls push original ones. The relocation table
(table.py) maps both ways and answers the debugger (`address_source`).
"""
import functools
from dataclasses import dataclass, field

from ...errors import InstrumenterError
from ..base import ProbeStrategy, take_hook_off
from ..native import new_slot
from ..placement import patch_site, validate_site
from .blocks import FunctionCode, find_function
from .copy import Copy, lay_out_copy
from .returns import ReturnRecords
from .signals import SignalFrames
from .table import RelocationSource, SpaceRelocations

INT3 = b"\xcc"


@dataclass
class Site:
    address: int
    function: int                                   # the function's start
    hooks: list = field(default_factory=list)      # Python hooks(thread, address)
    natives: list = field(default_factory=list)    # (hook, NativeSlot, owner)


@dataclass
class Function:
    code: FunctionCode
    owner: str                                     # the door's owner of its breakpoints
    copy: Copy | None = None                       # written, entered by the entry breakpoint
    pending: Copy | None = None                    # laid out, its slot reserved, not written

    @property
    def breakpoints(self) -> list[int]:
        return [self.code.start] + [call.next_address for call in self.code.calls]


class RelocateProbes(ProbeStrategy):
    # sites: (serial, address) -> Site; functions: (serial, start) -> Function;
    # relocations: serial -> SpaceRelocations; traps: (serial, address) -> fn(thread) -> ip;
    # analysis: (serial, start, size) -> FunctionCode | InstrumenterError
    tables = ("sites", "functions", "relocations", "traps", "analysis")

    def __init__(self, session):
        super().__init__(session)
        self.returns = ReturnRecords()
        self.retired: list[tuple[object, int, Copy]] = []   # (process, serial, copy) to free
        # Signal frames show original PCs, and sigreturn goes on in the copy (signals.py).
        self.debug.register_signal_pc_translator(SignalFrames(self).translate)

    # ---- placement ---------------------------------------------------------------------------
    def check(self, process, address: int) -> None:
        validate_site(process, address)
        fc = find_function(self.debug, process, address, self.analysis)
        if (process.space.serial, fc.start) not in self.functions:
            self._check_free(process, fc)
            if not self.session.trampolines.xol_for(process, near=fc.start).reaches(fc.start):
                raise InstrumenterError(f"{fc.name}: no XOL page within ±2 GiB for its copy")

    def _check_free(self, process, fc: FunctionCode) -> None:
        for address in [fc.start] + [call.next_address for call in fc.calls]:
            for other in self.debug.patches_overlapping(process, address, 1):
                raise InstrumenterError(f"{address:#x} in {fc.name} (a breakpoint of its "
                                        f"relocation) is already patched by {other.owners[0]}")
            if self.debug.breakpoint_at(process.space, address) is not None:
                raise InstrumenterError(f"{address:#x} in {fc.name} already has a breakpoint")

    def place(self, process, address: int, hook, owner: str) -> Site:
        self.check(process, address)
        fc = find_function(self.debug, process, address, self.analysis)
        serial = process.space.serial
        function = self.functions.get((serial, fc.start))
        if function is None:
            function = self._relocatable(process, fc)
        site = self.sites.get((serial, address))
        if site is None:
            site = self.sites[(serial, address)] = Site(address, fc.start)
        if getattr(hook, "native", None) is not None:
            data = self.session.jumps.data_for(process, address)
            slot = new_slot(data, hook, address, self.debug.arch(process).word,
                            self.debug.symbolize(process, address))
            site.natives.append((hook, slot, owner))
            self.session.jumps.natives.add(process, slot)
        else:
            site.hooks.append(hook)
        try:
            self._rebuild(process, function)
        except InstrumenterError:
            self.remove(process, address, hook, owner)      # nothing of it stays
            raise
        return site

    def _relocatable(self, process, fc: FunctionCode) -> Function:
        """The function's breakpoints, in place: its entry and its return points."""
        function = Function(fc, f"relocate:{fc.name}")
        self.functions[(process.space.serial, fc.start)] = function
        self._trap(process.space, fc.start, functools.partial(self._on_entry, fc.start))
        for call in fc.calls:
            self._trap(process.space, call.next_address,
                       functools.partial(self._on_return, fc.start, call.next_address))
        for address in function.breakpoints:
            patch_site(self.debug, process, address, INT3, function.owner)
        return function

    def remove(self, process, address: int, hook, owner: str) -> None:
        serial = process.space.serial
        site = self.sites.get((serial, address))
        take_hook_off(site, hook, owner, address)
        if not site.hooks and not site.natives:
            del self.sites[(serial, address)]
        function = self.functions[(serial, site.function)]
        if any(s.function == site.function for (sid, _), s in self.sites.items() if sid == serial):
            self._rebuild(process, function)
            return
        for address_ in function.breakpoints:           # the last probe: the original code
            self.debug.unpatch(process, address_, function.owner)
            self._untrap(process.space, address_)
        del self.functions[(serial, site.function)]
        self._retire(process, function)

    # ---- the copy ----------------------------------------------------------------------------
    def _rebuild(self, process, function: Function) -> None:
        """Lay out the copy with the function's probes as they are now, in a new slot; write
        it at once if the function runs relocated already, else at its first entry."""
        arch = self.debug.arch(process).name
        fc = function.code
        serial = process.space.serial
        probes = {}
        for (sid, address), site in self.sites.items():
            if sid == serial and site.function == fc.start:
                probes[address] = (bool(site.hooks), [slot for _, slot, _ in site.natives])
        xol = self.session.trampolines.xol_for(process, near=fc.start)
        if not xol.reaches(fc.start):
            raise InstrumenterError(f"{fc.name}: no XOL page within ±2 GiB")
        size = len(lay_out_copy(fc, xol.next, arch, probes).code)
        at = xol.allocate(size)
        new = lay_out_copy(fc, at, arch, probes)
        if len(new.code) != size:
            xol.release(at, size)
            raise InstrumenterError(f"{fc.name}: its copy changed size between layouts")
        if function.pending is not None:
            xol.release(function.pending.address, len(function.pending.code))
        function.pending = new
        if function.copy is not None:
            self._retire(process, function)
            self._activate(process, function)

    def _activate(self, process, function: Function) -> Copy:
        """Write the pending copy and make it the one entries go to (the first entry, or a
        rebuild of a relocated function)."""
        copy, function.pending = function.pending, None
        self.debug.write_memory(process, copy.address, bytes(copy.code))
        for at, (kind, original) in copy.callouts.items():
            handler = self._on_callout if kind == "probe" else self._on_call
            self._trap(process.space, at, functools.partial(handler, original, at + 1))
        self.relocations.setdefault(process.space.serial, SpaceRelocations()).add(copy)
        for piece in copy.pieces:           # a debugger's breakpoints reach into the copy
            self.debug.register_code_alias(process.space, piece.start, piece.original)
        function.copy = copy
        return copy

    def _retire(self, process, function: Function) -> None:
        """The function's copy serves no new entry; freed once no thread can be in it."""
        serial = process.space.serial
        table = self.relocations.get(serial)
        old = table.retire(function.code.start) if table is not None else None
        if function.pending is not None and function.copy is None:
            xol = self.session.trampolines.xol_for(process, near=function.code.start)
            xol.release(function.pending.address, len(function.pending.code))
            function.pending = None
        if old is not None:
            self.retired.append((process, serial, old))
        function.copy = None
        self.reclaim()

    def reclaim(self) -> None:
        """Free retired copies no thread's PC (live or saved in a signal frame) is in (as
        instrumenter/tracing/dynamic.py does for trampolines; no stack holds a copy address)."""
        waiting = []
        for process, serial, copy in self.retired:
            if process.space is None or process.space.serial != serial:
                continue
            if any(copy.address <= pc < copy.end for pc in self.debug.code_addresses_in_use(process)):
                waiting.append((process, serial, copy))
                continue
            for at in copy.callouts:
                self._untrap(process.space, at)
            self.debug.unregister_code_aliases(process.space, [p.start for p in copy.pieces])
            self.relocations[serial].drop(copy)
            xol = self.session.trampolines.xol_for(process, near=copy.function.start)
            xol.release(copy.address, len(copy.code))
        self.retired = waiting

    # ---- traps -------------------------------------------------------------------------------
    def _trap(self, space, address: int, fn) -> None:
        """`fn(thread) -> ip`: the int3 at `address` runs it and resumes at its answer."""
        debug = self.debug

        def redirect(thread) -> int:
            ip = fn(thread)
            if debug.code_alias_original(thread.process.space, ip) == address:
                debug.pass_code_alias_once(thread, ip)   # a debugger's stop was before the int3
            return ip
        self.traps[(space.serial, address)] = redirect

        def handler(frame, thread):
            frame.ip = redirect(thread)
            return True
        self.debug.register_breakpoint(space, address, handler)
        self.debug.register_breakpoint_redirect(space, address, redirect)

    def _untrap(self, space, address: int) -> None:
        self.traps.pop((space.serial, address), None)
        self.debug.unregister_breakpoint(space, address)

    def _on_entry(self, start: int, thread) -> int:
        """The instrumentation breakpoint: the first time, the copy is written; every time,
        the entry's Python probes run and the thread goes on in the copy."""
        process = thread.process
        function = self.functions[(process.space.serial, start)]
        copy = function.copy or self._activate(process, function)
        self._run_hooks(thread, start)
        return copy.entry_onward

    def _on_callout(self, original: int, onward: int, thread) -> int:
        self._run_hooks(thread, original)
        return onward

    def _run_hooks(self, thread, original: int) -> None:
        site = self.sites.get((thread.process.space.serial, original))
        if site is not None:
            for hook in list(site.hooks):
                hook(thread, original)

    def _on_call(self, original: int, onward: int, thread) -> int:
        """A call in the copy is about to push its ORIGINAL return address: remember it."""
        fc_return = self._return_of(thread, original)
        sp = self.debug.read_register(thread, self._sp(thread))
        self.returns.push(thread.process.space.serial, thread.tid, sp, fc_return)
        return onward

    def _return_of(self, thread, call_address: int) -> int:
        for (sid, _), function in self.functions.items():
            fc = function.code
            if sid == thread.process.space.serial and fc.contains(call_address):
                return fc.insns[fc.index[call_address]].next_address
        raise InstrumenterError(f"no relocated call at {call_address:#x}")

    def _on_return(self, start: int, original_return: int, thread) -> int:
        """A callee returned to an original return address: into the copy, whether the call
        was made there by this thread or not — a longjmp back to a setjmp whose call returned
        already, a thread that entered the function before it was relocated, a vfork child
        on its parent's stack: the copy's piece runs the same instruction with the same
        registers and stack (calls in a copy push original return addresses), so the thread
        goes on with the probes instead of in unprobed original code."""
        serial = thread.process.space.serial
        function = self.functions.get((serial, start))
        copy = function.copy if function is not None else None
        sp = self.debug.read_register(thread, self._sp(thread))
        self.returns.pop(serial, thread.tid, sp, original_return)
        if copy is None and function is not None and function.pending is not None:
            copy = self._activate(thread.process, function)     # original code ran until now
        if copy is not None:
            return copy.return_point(original_return)
        return self._continuation(thread, start, original_return)

    def _continuation(self, thread, start: int, original_return: int) -> int:
        table = self.relocations.get(thread.process.space.serial)
        for copy in reversed(table.copies if table is not None else []):
            if copy.function.start == start and original_return in copy.stubs:
                return copy.stubs[original_return].start
        raise InstrumenterError(f"no continuation for {original_return:#x}")

    def _sp(self, thread) -> str:
        return "rsp" if self.debug.arch(thread.process).bits == 64 else "esp"

    # ---- the table, the debugger, processes --------------------------------------------------
    def tables_of(self, process) -> SpaceRelocations | None:
        return self.relocations.get(process.space.serial)

    def original_of(self, process, address: int) -> tuple[int, bool] | None:
        table = self.tables_of(process)
        return table.original_of(address) if table is not None else None

    def relocated_of(self, process, original: int) -> int | None:
        table = self.tables_of(process)
        return table.relocated_of(original) if table is not None else None

    def address_source(self):
        return RelocationSource(self)

    def original_return(self, process, address: int) -> int | None:
        """A return address in relocated code -> the original it stands for (calls in a copy
        push original ones, so a stack holds none unless the program copied a PC)."""
        location = self.original_of(process, address)
        return None if location is None else location[0]

    def stale_points(self, process) -> dict[int, int]:
        """Every exact point of every mapped copy (signals.py's points: a piece's
        start, its instruction's start, a call's call-out, a kept jump back) -> its original."""
        table = self.tables_of(process)
        points = {}
        for copy in table.copies if table is not None else []:
            calls = [at for at, (kind, _) in copy.callouts.items() if kind == "call"]
            for piece in copy.pieces:
                for at in (piece.start, piece.insn_start, piece.jump_back):
                    if at is not None and at not in points:
                        points[at] = table.original_of(at)[0]
            points.update((at, table.original_of(at)[0]) for at in calls)
        return points

    def fork(self, parent, child) -> None:
        """The child's memory holds the copies and breakpoints: the same tables, its own
        Function objects (a probe added in one process rebuilds only its copy), the fast
        paths of its traps, and the forking thread's pending calls for the child's thread."""
        if parent.space is child.space:
            return
        self.sites.fork(parent.space, child.space)
        self.analysis.fork(parent.space, child.space)
        self.functions.fork(parent.space, child.space,
                            lambda f: Function(f.code, f.owner, f.copy, f.pending))
        self.relocations.fork(parent.space, child.space, lambda t: t.forked())
        for (_, address), fn in self.traps.fork(parent.space, child.space):
            self.debug.register_breakpoint_redirect(child.space, address, fn)
        forking = self.debug.current_thread()
        if forking is not None and forking.process is parent and child.threads:
            self.returns.fork(parent.space.serial, forking.tid, child.space.serial,
                              child.threads[0].tid)

    def forget(self, space) -> None:
        super().forget(space)
        self.returns.forget(space.serial)
        self.retired = [r for r in self.retired if r[1] != space.serial]
