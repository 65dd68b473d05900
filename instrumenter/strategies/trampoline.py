"""The trampoline strategy (US 9,336,001, FIG. 2-6).

Setup (FIG. 4): validate the address (instrumenter/strategies/placement.py), decode the
instruction there once, lay out the site's trampoline in an XOL page mapped into the process
(instrumenter/strategies/page_layout.py: the user instrumentation, Save_Registers,
Call_User_BreakpointHandler, Restore_Registers, OriginalInstruction_Copy, Jump_NextInstruction,
and a copy of each user handler, block 440), register the kernel breakpoint handler for the
address (block 445), then write the int3 (block 450).

Execution (FIG. 5, 6): int3 -> the kernel's #BP gate -> our kernel breakpoint handler runs the
kernel mode data (the probes' Python actions: records, `-p ... ` actions) and rewrites the saved
IP in the trap frame to the trampoline (block 540) -> IRET -> the trampoline runs the user mode
data inside the guest (native count/args actions, the user's handlers called with the saved
registers), then the relocated original instruction, then jumps back. The original instruction
stays replaced the whole time, so no thread can slip past the probe (unlike restore-and-
single-step). A probe can have both kinds of data.

A site's trampoline is rebuilt in a new slot when a probe with user mode data joins or leaves
it; the old one stays where it is: a thread may still be running through it.
"""
from dataclasses import dataclass, field

from ..insn.decode import Insn, decode
from ..errors import InstrumenterError
from .base import ProbeStrategy, take_hook_off
from .native import new_slot
from .page_layout import (SCRATCH_SIZE, HandlerCall, Page, fault_namer, has_handler, lay_out,
                          slot_size)
from .placement import patch_site, validate_site
from .task_scratch import TaskScratch
from .handlers.user import check_handler_of, handler_of
from ..insn.relocate import relocate
from .xol import XolArea

INT3 = b"\xcc"
MAX_INSN = 15
PLAIN_SLOT = 64           # the relocated instruction and its jump back


@dataclass
class Site:
    address: int
    trampoline: int
    hooks: list = field(default_factory=list)     # callables(thread, address), in placement order
    insn: Insn | None = None
    natives: list = field(default_factory=list)   # (hook, NativeSlot, owner): count/args in-page
    handlers: list = field(default_factory=list)  # (hook, HandlerCall): the users' handlers
    page: Page | None = None                      # the named blocks of the current trampoline

    @property
    def user_mode(self) -> bool:
        return bool(self.natives or self.handlers)


class TrampolineProbes(ProbeStrategy):
    # sites: (space.serial, address) -> Site; xols: space.serial -> areas, each near its code
    tables = ("sites", "xols")
    runs_user_handlers = True           # trapline trace --handler (Session.place checks it)
    # The relocator of the original instruction: relocate(insn, new_address, arch, **options)
    # -> Relocated (instrumenter/insn/relocate.py). A subclass with its own is a whole strategy
    # (issue 29: `trapline check` and trace place it like this one).
    relocator = staticmethod(relocate)

    def __init__(self, session):
        super().__init__(session)
        self.task_scratch = TaskScratch(self.debug)

    def xol_for(self, process, *, near: int, operand: int | None = None) -> XolArea:
        """An out-of-line area within rel32 reach of `near`: a program and the libraries at the
        top of the mmap region are further apart than ±2 GiB on x86-64, so a space may need
        one area near each (Linux's uprobes has one XOL page per mm: it needs no reach, its
        slots are single-stepped; our trampolines jump back). For a [rip+disp32] operand at
        `operand`, an area reaching it too where the layout allows (asked for half-way: both
        are within 2 GiB of the instruction), so the copy keeps a plain displacement."""
        areas = self.xols.setdefault(process.space.serial, [])
        wanted = [near] if operand is None else [near, operand]
        for xol in areas:
            if all(xol.reaches(address) for address in wanted):
                return xol
        xol = XolArea(self.debug, process, near if operand is None else (near + operand) // 2)
        areas.append(xol)
        if not xol.reaches(near):      # nothing free half-way (kept for later sites): near the code
            xol = XolArea(self.debug, process, near)
            areas.append(xol)
        return xol

    # ---- setup (FIG. 4) ----------------------------------------------------------------------
    def place(self, process, address: int, hook, owner: str) -> Site:
        check_handler_of(hook, self.debug.arch(process).name)
        key = (process.space.serial, address)
        site = self.sites.get(key)
        if site is not None:
            patch_site(self.debug, process, address, INT3, owner)
            self._add_hook(process, site, hook, owner)
            return site
        arch = self.debug.arch(process).name
        validate_site(process, address)
        code = self.debug.read_memory(process, address, MAX_INSN)
        insn = decode(code, address, arch)
        xol = self.xol_for(process, near=address, operand=insn.rip_target)
        if not xol.reaches(address):
            raise InstrumenterError(f"{address:#x}: no XOL page within ±2 GiB")
        for other in self.debug.patches_overlapping(process, address, 1):
            raise InstrumenterError(f"{address:#x} is already patched by {other.owners[0]}")
        site = Site(address, 0, insn=insn)
        self._add_hook(process, site, hook, owner)
        self.sites[key] = site
        self.debug.register_breakpoint(process.space, address, self._on_hit)
        self._set_redirect(process.space, site)
        patch_site(self.debug, process, address, INT3, owner)
        return site

    def check(self, process, address: int) -> None:
        """place's refusals for a new site, without patching (ProbeStrategy.refusal)."""
        arch = self.debug.arch(process).name
        validate_site(process, address)
        insn = decode(self.debug.read_memory(process, address, MAX_INSN), address, arch)
        self.relocator(insn, address, arch)           # its refusal, wherever the copy goes
        for other in self.debug.patches_overlapping(process, address, 1):
            if (process.space.serial, address) not in self.sites:
                raise InstrumenterError(f"{address:#x} is already patched by {other.owners[0]}")

    def _add_hook(self, process, site: Site, hook, owner: str) -> None:
        """Sort the probe's data: kernel mode (a Python hook, run in _on_hit) or user mode
        (a native action, a user handler: code in the trampoline page). A probe with a native
        action has no Python hook: the count or the record is made in the guest."""
        native = getattr(hook, "native", None)
        handler = handler_of(hook)
        arch = self.debug.arch(process).name
        if native is not None:
            data = self.session.jumps.data_for(process, site.address)
            slot = new_slot(data, hook, site.address, self.debug.arch(process).word,
                            self.debug.symbolize(process, site.address))
            site.natives.append((hook, slot, owner))
            self.session.jumps.natives.add(process, slot)
        else:
            site.hooks.append(hook)
        if handler is not None:
            handler.check_arch(arch)
            data = self.session.jumps.data_for(process, site.address)
            scratch = data.allocate(SCRATCH_SIZE + handler.data_size(arch))
            site.handlers.append((hook, HandlerCall(handler, owner, scratch, scratch + SCRATCH_SIZE)))
        if native is not None or handler is not None or site.trampoline == 0:
            self._build(process, site)

    def _build(self, process, site: Site) -> None:
        """Lay out the site's trampoline in a new XOL slot and send the next hits there."""
        arch = self.debug.arch(process).name
        xol = self.xol_for(process, near=site.address, operand=site.insn.rip_target)
        natives = [(slot, owner) for _, slot, owner in site.natives]
        handlers = [call for _, call in site.handlers]
        copies = []

        def copy(here):
            copies.append(self.relocator(site.insn, here, arch, task_scratch=True))
            return copies[-1]
        if not site.user_mode:
            at = xol.allocate(PLAIN_SLOT)
            page = lay_out(at, arch, probe_address=site.address, copy=copy)
        else:
            at = xol.allocate(slot_size(arch, natives, handlers))
            page = lay_out(at, arch, probe_address=site.address, natives=natives,
                           handlers=handlers, copy=copy)
        if natives:
            self.session.jumps.natives.arm(process, page, natives)
        if copies[-1].method == "task-scratch":           # lay_out's last pass is the page's
            self.task_scratch.install(process.space, copies[-1])
        xol.write(at, bytes(page.code))
        for address, data in page.data:
            self.debug.write_memory(process, address, data)
        if site.page is not None and has_handler(site.page):
            self.debug.unregister_tool_code(process.space, site.page.address)
        if handlers:
            self.debug.register_tool_code(process.space, at, page.here, fault_namer(page))
        site.trampoline, site.page = at, page

    def _set_redirect(self, space, site: Site) -> None:
        """_on_hit only runs the site's hooks and rewrites the saved IP to its trampoline: let
        the kernel take the int3 by a breakpoint redirect that does the same
        (kernel_model/debug/ register_breakpoint_redirect says why that is exact;
        register_breakpoint_trampoline is its form for this handler, one call fewer a hit;
        the kernel takes it only while _on_hit is still its handler for the address)."""
        self.debug.register_breakpoint_trampoline(space, site.address, site)

    def remove(self, process, address: int, hook, owner: str) -> None:
        """Take one probe's hook off a site; the last one restores the original bytes exactly.
        The trampolines stay in their XOL slots: a thread may still be running through one."""
        key = (process.space.serial, address)
        site = self.sites.get(key)
        natives = take_hook_off(site, hook, owner, address)
        calls = [h for h in site.handlers if h[0] is hook]
        if calls:
            site.handlers.remove(calls[0])
        self.debug.unpatch(process, address, owner)
        if not site.hooks and not site.natives:
            del self.sites[key]
            if site.page is not None and has_handler(site.page):
                self.debug.unregister_tool_code(process.space, site.page.address)
            self.debug.unregister_breakpoint_redirect(process.space, address)
            self.debug.unregister_breakpoint(process.space, address)
        elif natives or calls:
            self._build(process, site)

    # ---- execution (FIG. 5) ------------------------------------------------------------------
    def _on_hit(self, frame, thread) -> bool:
        """The kernel breakpoint handler: report, then send the thread to the trampoline."""
        address = frame.ip - 1
        site = self.sites[(thread.process.space.serial, address)]
        for hook in site.hooks:
            hook(thread, address)
        frame.ip = site.trampoline
        return True

    def fork(self, parent, child) -> None:
        """The child's memory is a copy, patches and XOL pages included (the door copied its
        table of patches): share the bookkeeping. (Native counters and handler data are
        copied, zeroed and collected by the jump strategy's collector, which owns the data
        pages: JumpProbes.data_for.)"""
        for _, site in self.sites.fork(parent.space, child.space):
            self._set_redirect(child.space, site)
            if site.handlers:
                self.debug.register_tool_code(child.space, site.page.address, site.page.here,
                                              fault_namer(site.page))
        self.xols.fork(parent.space, child.space, lambda areas: [xol.forked(child) for xol in areas])
        self.task_scratch.fork(parent.space, child.space)

    def forget(self, space) -> None:
        super().forget(space)
        self.task_scratch.forget(space)
