"""The singlestep strategy: restore, single-step, re-insert — the lossy baseline of US 7,350,196.

This is the classic scheme the patent argues against ([0004]-[0006]), kept on purpose as the
control group of the loss experiment (trapline/experiments/loss.py). Do not "fix" it.

On a hit of the int3: call the probe hooks, put the ORIGINAL bytes back at the site, set TF in
the saved flags and return from the trap to the site itself. The CPU runs the original
instruction and then raises #DB, a trap (Intel SDM Vol. 3A, 17.3.1.4: single-step after each
instruction while TF=1); the #DB handler writes the int3 back and clears TF.

Between the restore and the re-insert the site holds the original instruction. If the
scheduler switches threads in that window (here: an instruction quantum that ends right after
the int3), another thread runs the original instruction and the probe never sees it: a lost
event. Unicorn honours TF natively (intno 1 after one instruction, PC after it; checked by
tests/unit/instrumenter/strategies/emulate/test_strategy.py), so no emulator workaround is needed.
"""
import functools
from dataclasses import dataclass, field

from ..insn.decode import decode
from ..errors import InstrumenterError
from .base import ProbeStrategy
from .placement import patch_site, validate_site
from ..insn.policy import strategies_for

INT3 = b"\xcc"
TF = 0x100            # EFLAGS.TF (SDM Vol. 1, 3.4.3.3)
MAX_INSN = 15


@dataclass
class SteppedSite:
    address: int
    hooks: list = field(default_factory=list)


class SingleStepProbes(ProbeStrategy):
    """sites: (space.serial, address) -> SteppedSite (base.py: forked and forgotten there)."""

    def __init__(self, session):
        super().__init__(session)
        self.stepping: dict[int, tuple[object, SteppedSite]] = {}    # tid -> (process, site)
        self.restores = 0             # windows opened (each a chance for another thread to slip by)
        self.debug.subscribe(self)

    def place(self, process, address: int, hook, owner: str) -> SteppedSite:
        key = (process.space.serial, address)
        site = self.sites.get(key)
        if site is None:
            self.check(process, address)
            patch_site(self.debug, process, address, INT3, owner)
            site = self.sites[key] = SteppedSite(address)
            self.debug.register_breakpoint(process.space, address,
                                           functools.partial(self._on_hit, site))
            self.debug.register_debug_trap(process.space, self._on_debug_trap)
        else:
            patch_site(self.debug, process, address, INT3, owner)
        site.hooks.append(hook)
        return site

    def remove(self, process, address: int, hook, owner: str) -> None:
        """Take one hook off a site; the last one restores the original bytes (a thread
        inside its window re-inserts nothing: relay finds no site)."""
        key = (process.space.serial, address)
        site = self.sites.get(key)
        if site is None or hook not in site.hooks:
            raise InstrumenterError(f"no probe {owner} at {address:#x}")
        site.hooks.remove(hook)
        if self.debug.unpatch(process, address, owner):
            del self.sites[key]
            self.debug.unregister_breakpoint(process.space, address)

    def check(self, process, address: int) -> None:
        validate_site(process, address)
        insn = decode(self.debug.read_memory(process, address, MAX_INSN), address,
                      self.debug.arch(process).name)
        if "singlestep" not in strategies_for(insn):
            raise InstrumenterError(f"{insn}: cannot be single-stepped in place")
        if insn.groups & {"int"} or insn.base_mnemonic in ("syscall", "sysenter"):
            raise InstrumenterError(f"{insn}: a system call under TF is not modelled (the kernel "
                                    "would have to deliver #DB on its return to user mode)")
        if self.debug.breakpoint_at(process.space, address) is not None:
            raise InstrumenterError(f"{address:#x} is already probed with another strategy")

    def _on_hit(self, site: SteppedSite, frame, thread) -> bool:
        for hook in site.hooks:
            hook(thread, site.address)
        process = thread.process
        self.debug.lift_patch(process, site.address)                        # the window opens
        self.restores += 1
        self.stepping[thread.tid] = (process, site)
        frame.ip = site.address            # IRET to the original instruction...
        frame.flags |= TF                  # ...which traps (#DB) once it has run
        return True

    def _on_debug_trap(self, frame, thread):
        """#DB after the stepped instruction: re-insert the int3, stop stepping. None: a #DB
        this strategy did not cause (the program's own TF): the kernel's usual SIGTRAP."""
        pending = self.stepping.pop(thread.tid, None)
        if pending is None:
            return None
        process, site = pending
        if self.debug.patch_at(process, site.address) is not None:        # the window closes
            self.debug.relay_patch(process, site.address)
        frame.flags &= ~TF
        return True

    def exit(self, process, status) -> None:
        for thread in process.threads:
            self.stepping.pop(thread.tid, None)

    def end_windows(self, process) -> list:
        """Detach (instrumenter/tracing/detach.py): a thread of the space inside its window
        runs its original instruction without the #DB (TF cleared); returns those threads."""
        flags = "eflags" if self.debug.arch(process).bits == 32 else "rflags"
        ended = []
        for thread in self.debug.space_threads(process):
            if self.stepping.pop(thread.tid, None) is not None:
                self.debug.write_register(thread, flags, self.debug.read_register(thread, flags) & ~TF)
                ended.append(thread)
        return ended
