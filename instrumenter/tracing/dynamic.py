"""Probes enabled and disabled while the program runs (US 9,336,001: "an existing breakpoint may be
removed as desired using a process analogous" to its insertion).

A probe is enabled by placing it in every traced process it applies to (every address space
once) and disabled by taking each of its placements out again, at any moment: from the library
(`Session.add_probe`/`remove_probe`), at an instruction count (`Probe.enable_at`/`disable_at`,
the CLI's `--enable-at N`/`--disable-at N`), or from a probe's action. The logical switch is
immediate — a disabled probe records nothing from that instant, an enabled one from the next
instruction — and the patching is done at a safe point: between two guest instructions,
outside every hook (kernel_model/debug/alarms.py), where no thread is half-way through a
handler that could still send it to a trampoline being taken away. With `enable_at` E and
`disable_at` D the probe sees exactly the hits with E < ts <= D.

Reusing out-of-line code (uprobes' xol_free_insn_slot waits the same way): a trampoline taken
out is not handed out again while any thread could still execute it — a thread's PC inside it
(a thread preempted or blocked between the redirect and the jump back), or a PC saved in a
pending signal frame (sigreturn returns there). Such slots wait on a deferred list, checked at
every safe point and before every placement (once a site's int3 is out, no thread can enter
its handler any more, so the check holds inside hooks too); uretprobe landings stay mapped for
good (return addresses on the stacks point at them). Only strategies that can take a probe out (`remove`) place a probe that may be
removed: under `auto`, the trampoline.
"""
from typing import NamedTuple

from ..errors import InstrumenterError
from ..probes.definitions import SYSCALL, UPROBE, URETPROBE

TRAMPOLINE_SLOT = 64            # what TrampolineProbes allocates per site (trampoline.py)


class Placement(NamedTuple):
    process: object             # the process the probe was placed through (its space)
    serial: int                 # that space's serial (an exec'd process has a new space)
    address: int
    hook: object
    strategy: str
    inherited: bool = False     # a fork child's copy of a parent's placement (fork below)


class Deferred(NamedTuple):
    process: object
    serial: int                 # the space the slot is in (the process may exec meanwhile)
    xol: object
    address: int
    size: int


class DynamicProbes:
    def __init__(self, session):
        self.session = session
        self.debug = session.debug
        self.deferred: list[Deferred] = []      # slots waiting until nothing can run them
        self.released: list[tuple[int, int]] = []   # (space serial, slot) given back, in order
        self.removed: list = []                 # probes removed, to tell "twice" from "never"

    # ---- from the session's start: enable_at / disable_at ------------------------------------
    def schedule(self, probe) -> None:
        if probe.enable_at > 0:
            probe.enabled = False
            self.debug.at_instruction(probe.enable_at, lambda: self._enable(probe))
        if probe.disable_at is not None:
            probe.removable = True
            if probe.disable_at < probe.enable_at:
                raise InstrumenterError(f"{probe.spec.text}: disabled at {probe.disable_at} "
                                        f"before it is enabled at {probe.enable_at}")
            self.debug.at_instruction(probe.disable_at, lambda: self.remove(probe, at_once=True))

    # ---- enabling ------------------------------------------------------------------------------
    def add(self, probe, *, at_once: bool = False) -> None:
        """Enable `probe` now (`at_once`: the caller is at a safe point) or at the next safe
        point; its records start with the next instruction."""
        session = self.session
        known = any(p is probe for p in session.probes)
        if known and probe not in self.removed:
            raise InstrumenterError(f"{probe.spec.text}: already enabled")
        if known:
            self.removed.remove(probe)        # enabled again
        else:
            session.probes.append(probe)
        probe.enabled = False
        if at_once:
            self._enable(probe)
        else:
            self.debug.at_safe_point(lambda: self._enable(probe))

    def _enable(self, probe) -> None:
        if probe in self.removed:             # removed again before its safe point came
            return
        session = self.session
        self.reclaim()
        if probe.spec.kind == SYSCALL and session not in self.debug.syscall_watchers:
            self.debug.syscall_watchers.append(session)
        if probe.spec.kind in (UPROBE, URETPROBE):
            for process in self._traced_spaces():
                session.instrument_probes(process, [probe])
        probe.enabled = True

    def _traced_spaces(self) -> list:
        """One traced live process per address space, by pid."""
        seen, chosen = set(), []
        for process in self.debug.live_processes():
            serial = process.space.serial
            if self.session.monitor.is_traced(process) and serial not in seen:
                seen.add(serial)
                chosen.append(process)
        return chosen

    def fork(self, parent, child) -> None:
        """A fork child's memory holds the parent's patches (the door copied them and the
        breakpoint handlers; the strategies share their site objects with the child): its
        copies are placements too. Taking one out gives the child's bytes back (the door's
        unpatch, which does nothing where the children policy already detached the child);
        the hook itself leaves the shared site with the parent's placement."""
        if child.space is parent.space:
            return
        serial = parent.space.serial
        for probe in self.session.probes:
            placements = getattr(probe, "placements", None)
            if placements:
                placements += [p._replace(process=child, serial=child.space.serial, inherited=True)
                               for p in placements if p.serial == serial]

    # ---- disabling -----------------------------------------------------------------------------
    def remove(self, probe, *, at_once: bool = False) -> None:
        """Disable `probe` at once (it records nothing more) and take its placements out at
        the next safe point (`at_once`: the caller is at one)."""
        if not any(p is probe for p in self.session.probes):
            raise InstrumenterError(f"{probe.spec.text}: no such probe in this session")
        if probe in self.removed:
            raise InstrumenterError(f"{probe.spec.text}: removed already")
        for placement in probe.placements:
            if not hasattr(self.session.strategies[placement.strategy], "remove"):
                raise InstrumenterError(f"{probe.spec.text}: placed by {placement.strategy}, "
                                        "which cannot take a probe out")
        probe.enabled = False                 # its hits stay in the session's table
        self.removed.append(probe)
        if at_once:
            self._take_out(probe)
        else:
            self.debug.at_safe_point(lambda: self._take_out(probe))

    def _take_out(self, probe) -> None:
        placements, probe.placements = probe.placements, []
        for placement in placements:
            self._take_out_one(placement, probe.spec.text)
        self.reclaim()

    def _take_out_one(self, placement: Placement, owner: str) -> None:
        """Remove one placement; a trampoline whose last hook left waits on the deferred list
        (TrampolineProbes.remove leaves it in its slot: a thread may still be inside)."""
        strategy = self.session.strategies[placement.strategy]
        process, address = placement.process, placement.address
        space = process.space
        if space is None or space.serial != placement.serial or space.released:
            # that space is gone (exit, exec; a zombie still names the space it released, whose
            # sites the session forgot): nothing left to take out
            return
        if placement.inherited:
            patch = self.debug.patch_at(process, address)
            if patch is not None and owner in patch.owners:     # not detached by the policy
                self.debug.unpatch(process, address, owner)
            if self.debug.patch_at(process, address) is None:
                # The child's last patch there is gone: so is its entry for the site object it
                # shares with the parent (SpaceTable.fork), or a probe placed there later would
                # find that site and re-patch bytes the child no longer has patched.
                getattr(strategy, "sites", {}).pop((placement.serial, address), None)
            return
        key = (placement.serial, address)
        sites = getattr(strategy, "sites", {})
        site = sites.get(key)
        strategy.remove(process, address, placement.hook, owner)
        trampoline = getattr(site, "trampoline", None)      # (a jump keeps its copy for good)
        if placement.strategy == "trampoline" and trampoline is not None and key not in sites:
            xol = self.session.trampolines.xol_for(process, near=address)
            self.deferred.append(Deferred(process, placement.serial, xol, trampoline,
                                          TRAMPOLINE_SLOT))

    # ---- out-of-line slots ---------------------------------------------------------------------
    def reclaim(self) -> list[int]:
        """Give back every deferred slot that no thread can execute any more (at safe points and
        before placements: module docstring); returns the slots given back."""
        given, waiting = [], []
        in_use: dict[int, list[int]] = {}             # space serial -> addresses, this call
        for entry in self.deferred:
            serial = entry.serial
            if entry.process.space is None or entry.process.space.serial != serial:
                continue                              # the space is gone, and the slot with it
            if serial not in in_use:
                in_use[serial] = self.debug.code_addresses_in_use(entry.process)
            if any(entry.address <= pc < entry.address + entry.size for pc in in_use[serial]):
                waiting.append(entry)
                continue
            entry.xol.release(entry.address, entry.size)
            self.released.append((serial, entry.address))
            given.append(entry.address)
        self.deferred = waiting
        return given

    def forget_space(self, serial: int) -> None:
        """The space is gone: its deferred slots with it."""
        self.deferred = [e for e in self.deferred if e.serial != serial]
