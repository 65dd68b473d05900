"""Guest memory of one address space: map/unmap/protect, reads, and the ONE way to write.

All guest RAM lives in host pages (emu/host_pages.py) handed to Unicorn with uc_mem_map_ptr:
a read is a slice of a memoryview over the host pages and a write a slice assignment, with no
call into Unicorn (a view costs a fraction of ctypes.string_at/memmove per small access: every
one-byte read(2) and write(2) of a guest passes here); a copy of an address space
(fork) copies only the pages the guest touched; and the pages go back to the host as soon as
the guest unmaps them or the Machine is closed. A view lives exactly as long as its piece of
host pages: made with the piece, dropped when unmap cuts the piece or release frees it, so no
view ever reaches freed pages.

Host writes do not invalidate Unicorn's translated code (docs/unicorn.md item 1), so every
write that touches an executable page also removes the translations of that range. There is no
other write path, so no code patch can be left stale.

Beside it: the permission map that mirrors Unicorn's regions (emu/perm_map.py) and the
page-by-page sync of a recycled Machine's text (emu/page_sync.py).
"""
import bisect
import ctypes
import weakref

from unicorn import UC_ERR_OK, UcError

from . import host_pages
from . import page_sync
from .errors import MachineError, MemoryAccessError  # noqa: F401  (re-exported)
from .internals.binding import handle, uclib
from .perm_map import PROT_EXEC, PROT_READ, PROT_WRITE, PermMap  # noqa: F401  (re-exported)

PAGE = 0x1000
_SMALL_READ = 256


_NO_HIT = (0, -1, None, False)


def _free_pieces(starts: list, ends: list, hosts: list, views: list, shares: list) -> None:
    views.clear()                 # first: no view may outlive the pages under it
    for start, end, host, shared in zip(starts, ends, hosts, shares):
        if shared is None:
            host_pages.free(host, end - start)
        else:
            shared.drop()         # other address spaces may still map them
    starts.clear()
    ends.clear()
    hosts.clear()
    shares.clear()


def _view(host: int, size: int) -> memoryview:
    """Bytes [host, host+size) of the process as a writable memoryview (no copy)."""
    return memoryview((ctypes.c_char * size).from_address(host)).cast("B")


def page_down(addr: int) -> int:
    return addr & ~(PAGE - 1)


def page_up(addr: int) -> int:
    return (addr + PAGE - 1) & ~(PAGE - 1)


class Memory:
    def __init__(self, uc):
        self._uc = uc
        # Bumped whenever translations are dropped because code may have changed: tables
        # kept per translated block (block_clock.py) are stale from then on.
        self.code_epoch = 0
        # Which ranges are mapped with which perms, Unicorn's regions mirrored (emu/perm_map.py).
        self._perms = PermMap()
        # Mapped guest ranges and the host pages behind them: _starts[i] .. _ends[i] is at
        # host address _hosts[i]. A range is split when part of it is unmapped (the host
        # pages of that part are freed at once); mprotect leaves the pieces as they are.
        self._starts: list[int] = []
        self._ends: list[int] = []
        self._hosts: list[int] = []
        self._views: list[memoryview] = []        # _views[i]: the host pages of piece i
        # _shares[i]: the SharedPages (emu/shared_pages.py) piece i maps part of, None for
        # pages of this Memory's own; shared pages are dropped, never freed, from here.
        self._shares: list = []
        # The piece the last read or write found, as (start, end, view, holds no code): a run
        # of small accesses (read(2)/write(2) of one byte) mostly lands in the same piece, and
        # neither its search nor the look for code in it needs doing again. Forgotten on every
        # map/unmap/protect (_paint) and at release, so it never outlives its view.
        self._hit = _NO_HIT
        # Read-only code ranges known to hold the same bytes as in other Memories: (addr, size)
        # -> a token shared by every Memory holding those bytes there (_sync sets it, every
        # change of the range forgets it). A fork's recycled text with the parent's token needs
        # no comparison (busybox's 1.75 MiB of text, memory cold, at every fork otherwise).
        self._sources: dict[tuple[int, int], object] = {}
        self._small = ctypes.create_string_buffer(_SMALL_READ)
        # A Memory dropped without release() (a run that ended in an error, a test's Machine)
        # still gives its host pages back when it is collected.
        weakref.finalize(self, _free_pieces, self._starts, self._ends, self._hosts, self._views,
                         self._shares)

    # ---- mapping ---------------------------------------------------------------------------
    def map(self, addr: int, size: int, perms: int) -> None:
        """Map zero-filled pages at [addr, addr+size) (nothing may be mapped there)."""
        try:
            host = host_pages.allocate(size)
        except host_pages.HostMemoryError as e:
            raise MachineError(f"cannot map {addr:#x}+{size:#x}: {e}") from None
        try:
            self._uc.mem_map_ptr(addr, size, perms, host)
        except UcError as e:
            host_pages.free(host, size)
            raise MachineError(f"cannot map {addr:#x}+{size:#x}: {e}") from None
        self._add_piece(addr, size, host, None, perms)

    def map_shared(self, addr: int, size: int, perms: int, shared, offset: int) -> None:
        """Map [addr, addr+size) onto bytes [offset, offset+size) of `shared` (a SharedPages),
        which other Memories may map too: their writes are this range's (MAP_SHARED)."""
        host = shared.host + offset
        try:
            self._uc.mem_map_ptr(addr, size, perms, host)
        except UcError as e:
            raise MachineError(f"cannot map {addr:#x}+{size:#x}: {e}") from None
        shared.hold()
        self._add_piece(addr, size, host, shared, perms)

    def _add_piece(self, addr: int, size: int, host: int, shared, perms: int) -> None:
        i = bisect.bisect_left(self._starts, addr)
        self._starts.insert(i, addr)
        self._ends.insert(i, addr + size)
        self._hosts.insert(i, host)
        self._views.insert(i, _view(host, size))
        self._shares.insert(i, shared)
        self._paint(addr, addr + size, perms)

    def shared_at(self, addr: int):
        """(SharedPages, offset in it) of the shared page at `addr`; None if it is not one."""
        i = bisect.bisect_right(self._starts, addr) - 1
        if i < 0 or addr >= self._ends[i] or self._shares[i] is None:
            return None
        shared = self._shares[i]
        return shared, self._hosts[i] - shared.host + (addr - self._starts[i])

    def shared_pieces(self, addr: int, size: int):
        """(start, end, SharedPages, offset in it of start) of each shared piece in range."""
        for start, end in self._pieces_within(addr, addr + size):
            lo, hi = max(start, addr), min(end, addr + size)
            found = self.shared_at(lo)
            if found is not None:
                yield lo, hi, found[0], found[1]

    def share_from(self, other: "Memory", addr: int, size: int, perms: int) -> None:
        """Map here the same shared pages `other` maps at [addr, addr+size) (a fork's child
        inherits a MAP_SHARED area: both see one copy, mm/memory.c copy_page_range leaves
        shared areas to be faulted from the same object). Parts of `other` there that are
        not shared pages are copied instead."""
        for start, end in other._pieces_within(addr, addr + size):
            lo, hi = max(start, addr), min(end, addr + size)
            found = other.shared_at(lo)
            if found is None:
                self.map(lo, hi - lo, perms)
                self.copy_from(other, lo, hi - lo)
            else:
                self.map_shared(lo, hi - lo, perms, *found)

    def unmap(self, addr: int, size: int) -> None:
        """Unmap whatever is mapped in [addr, addr+size); holes are fine (munmap semantics)."""
        end = addr + size
        for start, stop in self._pieces_within(addr, end):
            lo, hi = max(start, addr), min(stop, end)
            # Only executable ranges can hold translations: Unicorn translates only what it may
            # fetch, and protect() drops them when a range stops being executable.
            if self._perms.touches_exec(lo, hi):
                self.code_epoch += 1
                self._uc.ctl_remove_cache(lo, hi)
            self._forget_sources(lo, hi)
            self._uc.mem_unmap(lo, hi - lo)
            self._cut(start, lo, hi)
            self._paint(lo, hi, None)

    def unbacked(self, addr: int, size: int) -> list[tuple[int, int]]:
        """The parts (start, end) of [addr, addr+size) that no piece holds, in order: what the
        kernel left without pages (a never-touched PROT_NONE area, kernel_model/memory/vm.py)."""
        holes, at, end = [], addr, addr + size
        for start, stop in self._pieces_within(addr, end):
            if start > at:
                holes.append((at, start))
            at = max(at, stop)
        if at < end:
            holes.append((at, end))
        return holes

    def _pieces_within(self, lo: int, hi: int) -> list[tuple[int, int]]:
        i = max(bisect.bisect_right(self._starts, lo) - 1, 0)
        out = []
        while i < len(self._starts) and self._starts[i] < hi:
            if self._ends[i] > lo:
                out.append((self._starts[i], self._ends[i]))
            i += 1
        return out

    def _cut(self, start: int, lo: int, hi: int) -> None:
        """Take [lo, hi) out of the piece that starts at `start`; free its host pages."""
        i = bisect.bisect_left(self._starts, start)
        stop, host, shared = self._ends[i], self._hosts[i], self._shares[i]
        del self._starts[i], self._ends[i], self._hosts[i], self._views[i], self._shares[i]
        if hi < stop:
            self._insert_part(i, hi, stop, host + (hi - start), shared)
        if start < lo:
            self._insert_part(i, start, lo, host, shared)
        if shared is None:
            host_pages.free(host + (lo - start), hi - lo)      # after its view is gone
        else:
            shared.drop()             # the parts kept hold it already

    def _insert_part(self, i: int, start: int, end: int, host: int, shared) -> None:
        self._starts.insert(i, start)
        self._ends.insert(i, end)
        self._hosts.insert(i, host)
        self._views.insert(i, _view(host, end - start))
        self._shares.insert(i, shared)
        if shared is not None:
            shared.hold()

    def protect(self, addr: int, size: int, perms: int) -> None:
        for start, end in self._pieces_within(addr, addr + size):
            lo, hi = max(start, addr), min(end, addr + size)
            if lo < hi:
                # Drop translations first so code re-checks the new permissions. The order
                # matters: removing the cache looks the page up for a fetch, which leaves a TLB
                # entry that lets guest loads skip Unicorn's read check; mem_protect flushes
                # the TLB afterwards, so a PROT_NONE guard page still faults on a read.
                self.code_epoch += 1
                self._uc.ctl_remove_cache(lo, hi)
                self._forget_sources(lo, hi)
                self._uc.mem_protect(lo, hi - lo, perms)
                self._paint(lo, hi, perms)

    def _paint(self, lo: int, hi: int, perms: int | None) -> None:
        """Record [lo, hi) as mapped with `perms` (None: unmapped); forget the last hit."""
        self._perms.paint(lo, hi, perms)
        self._hit = _NO_HIT

    def regions(self) -> list[tuple[int, int, int]]:
        """Mapped ranges as (start, end_exclusive, perms), sorted, adjacent equal ones merged."""
        return self._perms.regions()

    def is_mapped(self, addr: int, size: int = 1) -> bool:
        need = addr
        for start, end, _ in self.regions():
            if start <= need < end:
                need = end
                if need >= addr + size:
                    return True
        return False

    def perms_at(self, addr: int) -> int | None:
        return self._perms.perms_at(addr)

    def _host_address(self, addr: int, size: int) -> int | None:
        """The host address of guest [addr, addr+size) when one piece holds all of it."""
        i = bisect.bisect_right(self._starts, addr) - 1
        if i >= 0 and addr + size <= self._ends[i]:
            return self._hosts[i] + (addr - self._starts[i])
        return None

    # ---- copying and releasing -------------------------------------------------------------
    def copy_from(self, other: "Memory", addr: int, size: int) -> None:
        """Copy guest [addr, addr+size) of `other` into the same range here, both mapped and
        this side still zero (a fork's new pages): only the pages the source touched."""
        for start, end in other._pieces_within(addr, addr + size):
            lo, hi = max(start, addr), min(end, addr + size)
            source = other._host_address(lo, hi - lo)
            for piece_lo, piece_hi in self._pieces_within(lo, hi):
                a, b = max(piece_lo, lo), min(piece_hi, hi)
                host_pages.copy(self._host_address(a, b - a), source + (a - lo), b - a)
        if self._perms.touches_exec(addr, addr + size):
            self.code_epoch += 1
            self._uc.ctl_remove_cache(addr, addr + size)
            self._forget_sources(addr, addr + size)

    def sync(self, addr: int, data: bytes) -> int:
        """Make [addr, addr+len(data)) hold `data`, writing only the pages that differ
        (emu/page_sync.py). Returns the number of pages written."""
        return page_sync.sync(self, addr, data)

    def sync_from(self, other: "Memory", addr: int, size: int) -> int:
        """sync() with the bytes `other` holds at the same range (emu/page_sync.py)."""
        return page_sync.sync_from(self, other, addr, size)

    def same_source(self, other: "Memory") -> bool:
        """Whether some range holds bytes this Memory and `other` got from the same sync."""
        return any(other._sources.get(key) is token for key, token in self._sources.items())

    def _forget_sources(self, lo: int, hi: int) -> None:
        if self._sources:
            for key in [k for k in self._sources if k[0] < hi and k[0] + k[1] > lo]:
                del self._sources[key]

    def pieces(self) -> list[tuple[int, int]]:
        """The mapped ranges as they were mapped (map() calls less what unmap() cut away)."""
        return list(zip(self._starts, self._ends))

    def unmap_all_but(self, below: int, keep: set[tuple[int, int]]) -> None:
        """Unmap every piece under `below` except the ranges (start, end) in `keep`."""
        doomed = [(s, e) for s, e in zip(self._starts, self._ends)
                  if e <= below and (s, e) not in keep]
        for start, end in doomed:
            self.unmap(start, end - start)

    def release(self) -> None:
        """Give every host page back (after the Uc that used them was closed)."""
        self._hit = _NO_HIT
        self._sources.clear()
        _free_pieces(self._starts, self._ends, self._hosts, self._views, self._shares)
        self._uc = None

    def resident_bytes(self) -> int:
        """Bytes of guest memory the host holds now (touched pages)."""
        return sum(length for start, end, host in zip(self._starts, self._ends, self._hosts)
                   for _, length in host_pages.touched_runs(host, end - start))

    def resident(self, addr: int, size: int) -> bytes:
        """mincore's vector for page-aligned [addr, addr+size): 1 for a page whose host page
        exists (the guest wrote or read it, or populate made it), 0 for one never touched or
        without pages at all."""
        vector = bytearray(size // PAGE)
        for start, end in self._pieces_within(addr, addr + size):
            lo, hi = max(start, addr), min(end, addr + size)
            host = self._host_address(lo, hi - lo)
            first = (lo - addr) // PAGE
            vector[first:first + (hi - lo) // PAGE] = host_pages.resident(host, hi - lo)
        return bytes(vector)

    def populate(self, addr: int, size: int) -> None:
        """Make every page of [addr, addr+size) that has host pages resident (mlock)."""
        for start, end in self._pieces_within(addr, addr + size):
            lo, hi = max(start, addr), min(end, addr + size)
            view = self._views[bisect.bisect_left(self._starts, start)]
            host_pages.populate(view, lo - start, hi - start)

    # ---- access ----------------------------------------------------------------------------
    def read(self, addr: int, size: int) -> bytes:
        """`size` bytes at `addr`; MemoryAccessError unless every one of them is mapped. A
        negative size or address is no range at all (a guest's count taken as signed): it
        must not reach the slicing below, where it made an empty or a None slice."""
        start, end, view, _ = self._hit
        if start <= addr <= addr + size <= end or size >= 0 and self._find(addr, size):
            start, _, view, _ = self._hit
            return view[addr - start:addr - start + size].tobytes()
        if size < 0 or addr < 0 or size > _SMALL_READ and not self.is_mapped(addr, size):
            # Refused before any buffer is made: a guest's huge count over unmapped memory
            # would otherwise have the host allocate it first.
            raise MemoryAccessError(addr, size)
        # Across pieces, or not mapped: Unicorn says which. uclib directly: the binding's
        # mem_read builds a buffer, then a bytearray of it.
        buffer = self._small if size <= _SMALL_READ else ctypes.create_string_buffer(size)
        if uclib.uc_mem_read(handle(self._uc), addr, buffer, size) != UC_ERR_OK:
            raise MemoryAccessError(addr, size)
        return buffer.raw[:size]

    def write(self, addr: int, data: bytes) -> None:
        """Write guest memory; drops stale translations when the range holds code."""
        size = len(data)
        if not size:
            return                  # nothing to write (Unicorn would be asked to drop an empty range)
        start, end, view, no_code = self._hit
        if start <= addr and addr + size <= end or self._find(addr, size):
            start, _, view, no_code = self._hit
            view[addr - start:addr - start + size] = data
            if no_code:
                return
        else:
            try:
                self._uc.mem_write(addr, data)
            except UcError:
                raise MemoryAccessError(addr, len(data)) from None
        if self._perms.touches_exec(addr, addr + size):
            self.code_epoch += 1
            self._uc.ctl_remove_cache(addr, addr + size)
            self._forget_sources(addr, addr + size)

    def _find(self, addr: int, size: int) -> bool:
        """Make the piece holding all of [addr, addr+size) the last hit; False if no one piece
        holds it (across pieces, or not mapped)."""
        i = bisect.bisect_right(self._starts, addr) - 1
        if i < 0 or addr + size > self._ends[i]:
            return False
        start, end = self._starts[i], self._ends[i]
        self._hit = (start, end, self._views[i], not self._perms.touches_exec(start, end))
        return True

    def read_cstr(self, addr: int, limit: int = 4096) -> bytes:
        """Read a NUL-terminated string (without the NUL); MemoryAccessError if it runs off."""
        out = bytearray()
        while len(out) < limit:
            chunk_len = min(PAGE - (addr + len(out)) % PAGE, limit - len(out))
            chunk = self.read(addr + len(out), chunk_len)
            nul = chunk.find(b"\0")
            if nul >= 0:
                return bytes(out + chunk[:nul])
            out += chunk
        return bytes(out)

    def snapshot(self) -> list[tuple[int, int, int, bytes]]:
        """Every mapped range with its perms and bytes (used to copy an address space)."""
        return [(s, e, p, self.read(s, e - s)) for s, e, p in self.regions()]
