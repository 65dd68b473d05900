"""The breakpoint store and process-image store (seed 002): every patched site of an address
space, with its original bytes and its owners.

Several probes (and later a debugger) may share one site: the site is patched when its first
owner arrives and restored when its last owner leaves. Reads through `original_bytes` show
what the program's image holds without the patches.

Backpatching (seed 002 FIG. 6-8): `backpatch` writes every site's original bytes back into the
space (the process-image store is `Site.original`) and keeps the list of what it restored —
the seed's breakpoint list — and `reinsert` writes the patches of that list again. In
between the space runs the original program (a vfork child borrows it); the sites stay in
the store, and a site removed meanwhile simply leaves the list.
"""
import bisect
from dataclasses import dataclass, field

from ..errors import InstrumenterError


@dataclass
class Site:
    address: int
    original: bytes              # the bytes the patch replaced
    patch: bytes                 # what is written there
    owners: list = field(default_factory=list)


class BreakpointStore:
    """Sites of one address space (one Space, shared by its threads and vfork children)."""

    def __init__(self, debug, process):
        self.debug = debug
        self.process = process           # any process of the address space (for memory access)
        self.sites: dict[int, Site] = {}
        self._addresses: list[int] = []      # sorted site addresses (range queries)
        self.backpatched: list[int] = []     # sites whose original bytes are in memory now
        self.suspended = False               # between backpatch() and reinsert()

    def insert(self, address: int, patch: bytes, owner) -> Site:
        site = self.sites.get(address)
        if site is not None:
            if site.patch != patch:
                raise InstrumenterError(f"{address:#x} is already patched differently by {site.owners[0]}")
            site.owners.append(owner)
            return site
        for other in self._near(address, len(patch)):
            if other.address < address + len(patch) and address < other.address + len(other.patch):
                raise InstrumenterError(f"{address:#x} overlaps the patch at {other.address:#x}")
        original = self.debug.read_memory(self.process, address, len(patch))
        site = self.sites[address] = Site(address, original, patch, [owner])
        bisect.insort(self._addresses, address)
        if self.suspended:                   # placed while backpatched: patched at reinsert()
            self.backpatched.append(address)
        else:
            self.debug.write_memory(self.process, address, patch)
        return site

    def remove(self, address: int, owner) -> None:
        site = self.sites.get(address)
        if site is None or owner not in site.owners:
            raise InstrumenterError(f"no patch of {owner} at {address:#x}")
        site.owners.remove(owner)
        if not site.owners:
            self.debug.write_memory(self.process, address, site.original)
            del self.sites[address]
            self._addresses.remove(address)
            if address in self.backpatched:
                self.backpatched.remove(address)

    # ---- backpatching (seed 002) -------------------------------------------------------------
    def backpatch(self) -> list[int]:
        """Put the original bytes of every patched site back; returns the sites restored now
        (ascending), which are added to `backpatched`."""
        restored = [a for a in self._addresses if a not in self.backpatched]
        for address in restored:
            self.debug.write_memory(self.process, address, self.sites[address].original)
        self.backpatched.extend(restored)
        self.suspended = True
        return restored

    def reinsert(self) -> list[int]:
        """Write the patch of every backpatched site again; returns them and empties the list."""
        done, self.backpatched, self.suspended = sorted(self.backpatched), [], False
        for address in done:
            self.debug.write_memory(self.process, address, self.sites[address].patch)
        return done

    def clean_copy(self, process) -> list[int]:
        """Write every site's original bytes into `process`, whose memory is a copy of this
        space (a fork child being detached); this space keeps its patches."""
        for address in self._addresses:
            self.debug.write_memory(process, address, self.sites[address].original)
        return list(self._addresses)

    MAX_PATCH = 32          # a jump patch covers at most 4 + 15 bytes of whole instructions

    def _near(self, address: int, size: int):
        """Sites that may overlap [address, address+size) (no patch is longer than MAX_PATCH)."""
        lo = bisect.bisect_left(self._addresses, address - self.MAX_PATCH)
        hi = bisect.bisect_left(self._addresses, address + size)
        return [self.sites[a] for a in self._addresses[lo:hi]]

    def original_bytes(self, address: int, size: int) -> bytes:
        """Memory as the unpatched program has it."""
        data = bytearray(self.debug.read_memory(self.process, address, size))
        for site in self._near(address, size):
            for i, byte in enumerate(site.original):
                if address <= site.address + i < address + size:
                    data[site.address + i - address] = byte
        return bytes(data)
