"""The trampoline strategy (seed 000, FIG. 2-6).

Setup: validate the address (instrumenter/strategies/placement.py), decode the instruction there once,
relocate a copy of it into an XOL slot followed by a jump back to the next original
instruction, register the kernel breakpoint handler for the address, then write the int3.
Execution: int3 -> the kernel's #BP gate -> our handler records the hit (and runs Python
actions), rewrites the saved IP in the trap frame to the trampoline -> IRET -> the relocated
original instruction runs -> jump back. The original instruction stays replaced the whole
time, so no thread can slip past the probe (unlike restore-and-single-step).
"""
import functools
from dataclasses import dataclass, field

from ..insn.decode import decode
from ..errors import InstrumenterError
from .base import ProbeStrategy
from .placement import patch_site, validate_site
from ..insn.relocate import relocate
from .xol import XolArea

INT3 = b"\xcc"
MAX_INSN = 15


@dataclass
class Site:
    address: int
    trampoline: int
    hooks: list = field(default_factory=list)     # callables(thread, address), in placement order


class TrampolineProbes(ProbeStrategy):
    # sites: (space.serial, address) -> Site; xols: space.serial -> areas, each near its code;
    # boundary_cache: (space.serial, function, size) -> its instruction starts
    tables = ("sites", "xols", "boundary_cache")

    def xol_for(self, process, *, near: int) -> XolArea:
        """An out-of-line area within rel32 reach of `near`: a program and the libraries at the
        top of the mmap region are further apart than ±2 GiB on x86-64, so a space may need
        one area near each (Linux's uprobes has one XOL page per mm: it needs no reach, its
        slots are single-stepped; our trampolines jump back)."""
        areas = self.xols.setdefault(process.space.serial, [])
        for xol in areas:
            if xol.reaches(near):
                return xol
        xol = XolArea(self.debug, process, near)
        areas.append(xol)
        return xol

    def place(self, process, address: int, hook, owner: str) -> Site:
        key = (process.space.serial, address)
        site = self.sites.get(key)
        if site is not None:
            patch_site(self.debug, process, address, INT3, owner)
            site.hooks.append(hook)
            return site
        arch = self.debug.arch(process).name
        validate_site(process, address, functools.partial(self.debug.read_memory, process),
                      self.boundary_cache)
        code = self.debug.read_memory(process, address, MAX_INSN)
        insn = decode(code, address, arch)
        xol = self.xol_for(process, near=address)
        if not xol.reaches(address):
            raise InstrumenterError(f"{address:#x}: no XOL page within ±2 GiB")
        for other in self.debug.patches_overlapping(process, address, 1):
            raise InstrumenterError(f"{address:#x} is already patched by {other.owners[0]}")
        trampoline = xol.allocate(64)
        xol.write(trampoline, relocate(insn, trampoline, arch).code)
        site = self.sites[key] = Site(address, trampoline, [hook])
        self.debug.register_breakpoint(process.space, address, self._on_hit)
        self._set_redirect(process.space, site)
        patch_site(self.debug, process, address, INT3, owner)
        return site

    def check(self, process, address: int) -> None:
        """place's refusals for a new site, without patching (ProbeStrategy.refusal)."""
        arch = self.debug.arch(process).name
        validate_site(process, address, functools.partial(self.debug.read_memory, process),
                      self.boundary_cache)
        insn = decode(self.debug.read_memory(process, address, MAX_INSN), address, arch)
        relocate(insn, address, arch)                 # its refusal, wherever the copy goes
        for other in self.debug.patches_overlapping(process, address, 1):
            if (process.space.serial, address) not in self.sites:
                raise InstrumenterError(f"{address:#x} is already patched by {other.owners[0]}")

    def _set_redirect(self, space, site: Site) -> None:
        """_on_hit only rewrites the saved IP: let the kernel take the int3 by a breakpoint
        redirect (kernel_model/debug.py register_breakpoint_redirect says why that is exact;
        the kernel takes it only while _on_hit is still its handler for the address)."""
        address = site.address

        def redirect(thread):
            for hook in site.hooks:
                hook(thread, address)
            return site.trampoline
        self.debug.register_breakpoint_redirect(space, address, redirect)

    def remove(self, process, address: int, hook, owner: str) -> None:
        """Take one hook off a site; the last one restores the original bytes exactly. The
        trampoline stays in its XOL slot: a thread may still be running through it."""
        key = (process.space.serial, address)
        site = self.sites.get(key)
        if site is None or hook not in site.hooks:
            raise InstrumenterError(f"no probe {owner} at {address:#x}")
        site.hooks.remove(hook)
        self.debug.unpatch(process, address, owner)
        if not site.hooks:
            del self.sites[key]
            self.debug.unregister_breakpoint_redirect(process.space, address)
            self.debug.unregister_breakpoint(process.space, address)

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
        table of patches): share the bookkeeping."""
        for _, site in self.sites.fork(parent.space, child.space):
            self._set_redirect(child.space, site)
        self.xols.fork(parent.space, child.space, lambda areas: [xol.forked(child) for xol in areas])
