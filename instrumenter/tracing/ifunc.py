"""Probes on an IFUNC symbol (STT_GNU_IFUNC: glibc's strlen, memcpy, cos...).

Such a symbol's address is its resolver's: ld.so calls the resolver once per reference
(R_X86_64_IRELATIVE / R_386_IRELATIVE relocations, lazy PLT binding) and uses what it returns,
the implementation picked for this CPU (__strlen_sse2 on the modeled CPU, which advertises no
AVX). A probe at the resolver would fire at load time, never at a call. So a probe on an IFUNC
is pending until its resolver has returned: one return hook on the resolver reads the
implementation's address from the return value (eax/rax) and places every probe on that IFUNC
there, once per address space and implementation — the resolution gdb does by calling the
resolver in the inferior, here observed when ld.so calls it. The placed probes then see every
call, including the one that follows a lazy binding (the hook runs before ld.so jumps to the
implementation). The resolver is hooked for a probe that is not enabled yet too (--enable-at,
Session.add_probe later): enabled after ld.so has resolved, it goes where the resolver said.

A probe first asked for after the resolver ran (Session.add_probe from an action) had nobody
watching: it finds what ld.so bound in the GOT slots it filled (`bound_implementations`: the
IRELATIVE slots of the IFUNC's own library, and every object's GLOB_DAT/JUMP_SLOT/word slots
naming the symbol), as gdb reads a bound PLT slot; a slot still lazy (pointing at its PLT) names
no implementation, and the resolver's return hook catches that binding when it happens.
"""
from __future__ import annotations

from loader.relocations import got_slots


class IfuncResolution:
    """One IFUNC of one library. It stands in for a probe on the resolver's return
    (instrumenter/tracing/uretprobes.py calls `resolved` with the return value)."""

    def __init__(self, session, probe):
        self.session = session
        self.probes = [probe]
        self.spec = probe.spec                      # returns.py names pending frames by it
        self.hooked: set[tuple[int, int]] = set()   # (space serial, resolver) with the hook
        self.resolved_in: dict[int, set[int]] = {}  # space serial -> implementations seen
        self.placed: set[tuple[int, int, int]] = set()   # (serial, implementation, id of probe)

    def add(self, probe) -> None:
        if probe not in self.probes:
            self.probes.append(probe)

    def enable(self, process, probe) -> None:
        """`probe` is enabled while the program runs: where this space's resolver has
        returned already (it will not run again), place it at what it returned."""
        serial, index = process.space.serial, self.probes.index(probe)
        self.placed = {key for key in self.placed if key[::2] != (serial, index)}   # taken out
        for implementation in sorted(self.resolved_in.get(serial, ())):
            self._place(process, probe, implementation)

    def hook(self, process, resolver: int) -> None:
        """Put the return hook on the resolver of `process`, once per address space."""
        key = (process.space.serial, resolver)
        if key not in self.hooked:
            self.hooked.add(key)
            self.session.returns.place(process, self, resolver)

    def resolved(self, thread, implementation: int) -> None:
        """The resolver returned `implementation`: remembered for the space (a probe enabled
        later goes there), and every enabled probe on this IFUNC placed there."""
        process = thread.process
        self.remember(process, implementation)
        for probe in self.probes:
            if probe.enabled:
                self._place(process, probe, implementation)

    def remember(self, process, implementation: int) -> None:
        """Where this IFUNC resolved in `process`'s space (from its GOT, `enable` places)."""
        self.resolved_in.setdefault(process.space.serial, set()).add(implementation)

    def _place(self, process, probe, implementation: int) -> None:
        key = (process.space.serial, implementation, self.probes.index(probe))
        if key not in self.placed:
            self.placed.add(key)
            self.session.place_resolved(process, probe, implementation)

    def forget_space(self, serial: int) -> None:
        self.hooked = {key for key in self.hooked if key[0] != serial}
        self.resolved_in.pop(serial, None)
        self.placed = {key for key in self.placed if key[0] != serial}


def bound_implementations(door, process, mapped, name: str, resolver: int) -> list[int]:
    """The addresses ld.so has stored for IFUNC `name` (resolver `resolver`, in `mapped`) in
    `process`'s GOT slots. A bound slot points into `mapped` (the implementations are often
    local symbols that a stripped libc does not name), never at the resolver; a lazy one still
    holds its PLT stub."""
    word = door.arch(process).word
    found = set()
    for other in door.images(process):
        if other.image is None:
            continue
        for slot in got_slots(other.image):
            if not (slot.resolver == resolver if slot.kind == "irelative" else slot.symbol == name):
                continue
            raw = door.peek(process, slot.address, word)
            value = int.from_bytes(raw, "little") if raw is not None else None
            if value is not None and value not in (resolver, slot.lazy) and mapped.base <= value < mapped.end:
                found.add(value)
    return sorted(found)
