"""Tool patches in a traced process's text, kept by the door (US 7,185,320's breakpoint store and
process-image store), so that every tool sees the program's own bytes under them.

Part of the debug interface (kernel_model/debug/). A tool patches code only through
`patch`: an int3, a LOCK prefix, a 5-byte jump. Per address space (shared by its threads and
a vfork child) the door keeps every patched site with the bytes the patch replaced and its
owners; several probes and a debugger breakpoint may share a site (same bytes), which is
written when its first owner arrives and restored when its last one leaves.

What every tool then gets, as gdbserver gives GDB for its own breakpoints and fast-tracepoint
jumps (gdbserver/mem-break.c `check_mem_read`/`check_mem_write`) and Linux for uprobes:
  * `read_memory` shows the original bytes wherever a patch lies; `read_memory_raw` shows
    what the CPU runs (the tools that verify their own patches);
  * `write_memory` into a patched range updates the saved originals and leaves the patch in
    place (a debugger's `set var` on code, a tool's own write), elsewhere it writes plainly;
  * a fork child's copy of the memory holds the same patches, so it gets a copy of the table
    (`copy_patches`, from the kernel's fork path); a released space is forgotten.

Lifting (US 7,185,320 FIG. 6-8, and single-stepping over a breakpoint): `backpatch` writes every
site's original bytes back into the space and keeps the list of what it restored — the patent's
breakpoint list — and `reinsert_patches` writes those patches again; in between the space runs
the original program (a vfork child borrows it), the sites stay in the table, a site placed
meanwhile is written only at re-insertion, and a site removed meanwhile leaves the list.
`lift_patch`/`relay_patch` do the same for one site (the single-step scheme's window).
"""
import bisect
from dataclasses import dataclass, field

from ..errors import KernelError


class PatchConflict(KernelError):
    """A patch that would overlap another one, or differ from the one already at its address."""


@dataclass
class PatchSite:
    address: int
    original: bytes              # the program's bytes under the patch
    patch: bytes                 # what the CPU sees there while the site is in place
    owners: list = field(default_factory=list)
    lifted: bool = False         # the original is in memory now (lift_patch)

    @property
    def end(self) -> int:
        return self.address + len(self.patch)


MAX_PATCH = 32                   # a jump patch covers at most 4 + 15 bytes of whole instructions


class SpacePatches:
    """The patched sites of one address space, by address (sorted for range queries)."""

    def __init__(self):
        self.sites: dict[int, PatchSite] = {}
        self.addresses: list[int] = []
        self.backpatched: list[int] = []     # sites whose original is in memory for backpatch()
        self.suspended = False               # between backpatch() and reinsert_patches()

    def overlapping(self, address: int, size: int) -> list[PatchSite]:
        """Sites whose patch overlaps [address, address+size), by address."""
        addresses = self.addresses
        lo = bisect.bisect_left(addresses, address - MAX_PATCH)
        hi = bisect.bisect_left(addresses, address + size)
        sites = self.sites
        return [site for site in (sites[a] for a in addresses[lo:hi])
                if site.end > address]

    def in_place(self, site: PatchSite) -> bool:
        """Does the CPU see the patch (rather than the original) at `site` now?"""
        return not site.lifted and site.address not in self.backpatched

    def copy(self) -> "SpacePatches":
        clone = SpacePatches()
        clone.sites = {a: PatchSite(s.address, s.original, s.patch, list(s.owners), s.lifted)
                       for a, s in self.sites.items()}
        clone.addresses = list(self.addresses)
        clone.backpatched = list(self.backpatched)
        clone.suspended = self.suspended
        return clone


def _overlay(data: bytearray, address: int, site: PatchSite, source: bytes) -> None:
    """Copy the part of `source` (laid out at site.address) that falls in `data`."""
    start = max(address, site.address)
    end = min(address + len(data), site.end)
    if start < end:
        data[start - address:end - address] = source[start - site.address:end - site.address]


class PatchAccess:
    """A part of DebugInterface: the patch table and the memory views that respect it."""
    _patches: dict | None = None             # space.serial -> SpacePatches

    def _space_patches(self, process, create: bool = False) -> SpacePatches | None:
        table = self._patches
        if table is None:
            if not create:
                return None
            table = self._patches = {}
        patches = table.get(process.space.serial)
        if patches is None and create:
            patches = table[process.space.serial] = SpacePatches()
        return patches

    # ---- memory as tools see it ---------------------------------------------------------
    def read_memory(self, process, address: int, size: int) -> bytes:
        """`process`'s memory as the program has it: the original bytes under every tool
        patch (PTRACE_PEEKTEXT and /proc/PID/mem under uprobes, gdbserver under its own
        breakpoints)."""
        data = process.space.machine.mem.read(address, size)
        patches = self._space_patches(process)
        if not patches or not patches.sites:
            return data
        sites = patches.overlapping(address, size)
        if not sites:
            return data
        data = bytearray(data)
        for site in sites:
            _overlay(data, address, site, site.original)
        return bytes(data)

    @staticmethod
    def read_memory_raw(process, address: int, size: int) -> bytes:
        """What the CPU fetches there, tool patches included."""
        return process.space.machine.mem.read(address, size)

    def write_memory(self, process, address: int, data: bytes) -> None:
        """Write as the program would have it: bytes that fall under a tool patch update the
        saved original and the patch stays in place (gdbserver's check_mem_write). Through
        the Machine's one write path: translations of the changed code are dropped."""
        mem = process.space.machine.mem
        patches = self._space_patches(process)
        sites = patches.overlapping(address, len(data)) if patches and patches.sites else ()
        if not sites:
            mem.write(address, data)
            return
        written = bytearray(data)
        for site in sites:
            original = bytearray(site.original)
            _overlay(original, site.address, _Span(address, len(data)), data)
            site.original = bytes(original)
            if patches.in_place(site):
                _overlay(written, address, site, site.patch)
        mem.write(address, bytes(written))

    # ---- patching -------------------------------------------------------------------------
    def patch(self, process, address: int, data: bytes, owner) -> PatchSite:
        """Put `data` over the code at `address` in `process`'s address space for `owner`.
        A site already patched with the same bytes gains an owner; different bytes there,
        or an overlap with another site, is a PatchConflict (nothing is written)."""
        patches = self._space_patches(process, create=True)
        site = patches.sites.get(address)
        if site is not None:
            if site.patch != data:
                raise PatchConflict(f"{address:#x} is already patched differently by {site.owners[0]}")
            site.owners.append(owner)
            return site
        for other in patches.overlapping(address, len(data)):
            raise PatchConflict(f"{address:#x} overlaps the patch at {other.address:#x} "
                                f"({other.owners[0]})")
        original = self.read_memory(process, address, len(data))
        site = patches.sites[address] = PatchSite(address, original, bytes(data), [owner])
        bisect.insort(patches.addresses, address)
        if patches.suspended:                # placed while backpatched: written at re-insertion
            patches.backpatched.append(address)
        else:
            process.space.machine.mem.write(address, data)
        return site

    def repatch(self, process, address: int, data: bytes, owner) -> None:
        """Change the bytes of the site at `address` (same length: a jump re-aimed at a new
        trampoline part), adding `owner` if it is a new one."""
        site = self._site(process, address)
        if len(data) != len(site.patch):
            raise PatchConflict(f"{address:#x}: a new patch of {len(data)} bytes for one of "
                                f"{len(site.patch)}")
        if owner not in site.owners:
            site.owners.append(owner)
        if data != site.patch:
            site.patch = bytes(data)
            if self._space_patches(process).in_place(site):
                process.space.machine.mem.write(address, data)

    def unpatch(self, process, address: int, owner) -> bool:
        """`owner` leaves the site; the last owner's leaving writes the original bytes back.
        True when the site is gone."""
        patches = self._space_patches(process)
        site = patches.sites.get(address) if patches else None
        if site is None or owner not in site.owners:
            raise KernelError(f"no patch of {owner} at {address:#x}")
        site.owners.remove(owner)
        if site.owners:
            return False
        process.space.machine.mem.write(address, site.original)
        del patches.sites[address]
        patches.addresses.remove(address)
        if address in patches.backpatched:
            patches.backpatched.remove(address)
        return True

    def patch_at(self, process, address: int) -> PatchSite | None:
        """The site patched at exactly `address` (its original, patch, owners), or None."""
        patches = self._space_patches(process)
        return patches.sites.get(address) if patches else None

    def patches_overlapping(self, process, address: int, size: int) -> list[PatchSite]:
        """Sites whose patch overlaps [address, address+size), by address."""
        patches = self._space_patches(process)
        return patches.overlapping(address, size) if patches else []

    def patched_addresses(self, process) -> list[int]:
        patches = self._space_patches(process)
        return list(patches.addresses) if patches else []

    def _site(self, process, address: int) -> PatchSite:
        site = self.patch_at(process, address)
        if site is None:
            raise KernelError(f"no patch at {address:#x} in pid {process.pid}")
        return site

    # ---- lifting (single-step window; US 7,185,320 backpatching) -----------------------------
    def lift_patch(self, process, address: int) -> None:
        """Put the original bytes of one site back in memory; the site stays in the table."""
        site = self._site(process, address)
        site.lifted = True
        process.space.machine.mem.write(address, site.original)

    def relay_patch(self, process, address: int) -> None:
        """Write a lifted site's patch again (unless the whole space is backpatched)."""
        site = self._site(process, address)
        site.lifted = False
        if self._space_patches(process).in_place(site):
            process.space.machine.mem.write(address, site.patch)

    def backpatch(self, process) -> list[int]:
        """Original bytes at every site of the space; returns the sites restored now
        (ascending), which join the space's breakpoint list."""
        patches = self._space_patches(process)
        if patches is None:
            return []
        mem = process.space.machine.mem
        restored = [a for a in patches.addresses if a not in patches.backpatched]
        for address in restored:
            mem.write(address, patches.sites[address].original)
        patches.backpatched.extend(restored)
        patches.suspended = True
        return restored

    def reinsert_patches(self, process) -> list[int]:
        """Write the patch of every site of the breakpoint list again; returns them (ascending)
        and empties the list."""
        patches = self._space_patches(process)
        if patches is None:
            return []
        done, patches.backpatched, patches.suspended = sorted(patches.backpatched), [], False
        mem = process.space.machine.mem
        for address in done:
            site = patches.sites[address]
            if not site.lifted:
                mem.write(address, site.patch)
        return done

    def is_backpatched(self, process) -> bool:
        patches = self._space_patches(process)
        return patches is not None and patches.suspended

    def has_patches(self, process) -> bool:
        patches = self._space_patches(process)
        return bool(patches and patches.sites)

    def remove_all_patches(self, process) -> list[int]:
        """Every site's original bytes back and the space's table dropped (a fork child the
        tool detaches from: its copy runs as if never probed). Returns the sites."""
        patches = self._space_patches(process)
        if patches is None:
            return []
        mem = process.space.machine.mem
        for address in patches.addresses:
            mem.write(address, patches.sites[address].original)
        del self._patches[process.space.serial]
        return list(patches.addresses)

    # ---- lifecycle (the kernel's fork path and space release) ----------------------------
    def copy_patches(self, parent_space, child_space) -> None:
        """fork: the child's memory is a copy, patches included: so is its table."""
        table = self._patches
        if table and parent_space.serial in table:
            table[child_space.serial] = table[parent_space.serial].copy()

    def forget_patches(self, space) -> None:
        if self._patches:
            self._patches.pop(space.serial, None)


class _Span:
    """[address, address+size) in the shape _overlay takes a site in."""
    __slots__ = ("address", "end")

    def __init__(self, address: int, size: int):
        self.address, self.end = address, address + size
