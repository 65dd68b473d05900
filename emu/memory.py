"""Guest memory of one address space: map/unmap/protect, reads, and the ONE way to write.

Host writes do not invalidate Unicorn's translated code (UNICORN_FACTS.md item 1), so every
write that touches an executable page also removes the translations of that range. There is no
other write path, so no code patch can be left stale.
"""
import bisect
import ctypes

from unicorn import UC_ERR_OK, UcError
from unicorn.unicorn_py3.unicorn import uclib

from .errors import MachineError

PAGE = 0x1000
PROT_READ, PROT_WRITE, PROT_EXEC = 1, 2, 4     # same bits as Unicorn's UC_PROT_* and Linux PROT_*
_SMALL_READ = 256


class MemoryAccessError(MachineError):
    """A host-side read or write of guest memory touched an unmapped address."""

    def __init__(self, address: int, size: int):
        super().__init__(f"guest memory not mapped at {address:#x} (+{size})")
        self.address = address


def page_down(addr: int) -> int:
    return addr & ~(PAGE - 1)


def page_up(addr: int) -> int:
    return (addr + PAGE - 1) & ~(PAGE - 1)


class Memory:
    def __init__(self, uc):
        self._uc = uc
        # Sorted, non-overlapping (start, end) ranges that are executable: the write path
        # checks them to know when translations must be dropped.
        self._exec_starts: list[int] = []
        self._exec_ends: list[int] = []
        # Host-backed data ranges (start, end, ctypes buffer): written by memmove, without a
        # call into Unicorn. Never executable, never unmapped in part (kernel stacks).
        self._host_backed: list[tuple[int, int, object]] = []
        self._small = ctypes.create_string_buffer(_SMALL_READ)

    # ---- mapping ---------------------------------------------------------------------------
    def map(self, addr: int, size: int, perms: int) -> None:
        try:
            self._uc.mem_map(addr, size, perms)
        except UcError as e:
            raise MachineError(f"cannot map {addr:#x}+{size:#x}: {e}") from None
        self._refresh_exec_ranges()

    def map_host_backed(self, addr: int, size: int, perms: int) -> None:
        """Map data memory that lives in a host buffer (uc_mem_map_ptr). Writes to it are a
        memmove: a uc_mem_write issued from inside a hook costs ~5 µs while the emulator runs,
        and every trap frame is such a write. Not for code (no translation would see it)."""
        if perms & PROT_EXEC:
            raise MachineError("host-backed memory cannot be executable")
        buffer = ctypes.create_string_buffer(size)
        try:
            self._uc.mem_map_ptr(addr, size, perms, ctypes.addressof(buffer))
        except UcError as e:
            raise MachineError(f"cannot map {addr:#x}+{size:#x}: {e}") from None
        self._host_backed.append((addr, addr + size, buffer))

    def _host_buffer(self, addr: int, size: int):
        for start, end, buffer in self._host_backed:
            if start <= addr and addr + size <= end:
                return ctypes.addressof(buffer) + (addr - start)
        return None

    def unmap(self, addr: int, size: int) -> None:
        """Unmap whatever is mapped in [addr, addr+size); holes are fine (munmap semantics)."""
        for start, end, _ in self.regions():
            lo, hi = max(start, addr), min(end, addr + size)
            if lo < hi:
                self._uc.ctl_remove_cache(lo, hi)
                self._uc.mem_unmap(lo, hi - lo)
        self._refresh_exec_ranges()

    def protect(self, addr: int, size: int, perms: int) -> None:
        for start, end, _ in self.regions():
            lo, hi = max(start, addr), min(end, addr + size)
            if lo < hi:
                # Drop translations first so code re-checks the new permissions. The order
                # matters: removing the cache looks the page up for a fetch, which leaves a TLB
                # entry that lets guest loads skip Unicorn's read check; mem_protect flushes
                # the TLB afterwards, so a PROT_NONE guard page still faults on a read.
                self._uc.ctl_remove_cache(lo, hi)
                self._uc.mem_protect(lo, hi - lo, perms)
        self._refresh_exec_ranges()

    def regions(self) -> list[tuple[int, int, int]]:
        """Mapped ranges as (start, end_exclusive, perms), sorted, adjacent equal ones merged."""
        out: list[list[int]] = []
        for begin, last, perms in sorted(self._uc.mem_regions()):
            if out and out[-1][1] == begin and out[-1][2] == perms:
                out[-1][1] = last + 1
            else:
                out.append([begin, last + 1, perms])
        return [tuple(r) for r in out]

    def is_mapped(self, addr: int, size: int = 1) -> bool:
        need = addr
        for start, end, _ in self.regions():
            if start <= need < end:
                need = end
                if need >= addr + size:
                    return True
        return False

    def perms_at(self, addr: int) -> int | None:
        for start, end, perms in self.regions():
            if start <= addr < end:
                return perms
        return None

    def _refresh_exec_ranges(self) -> None:
        ranges = [(s, e) for s, e, p in self.regions() if p & PROT_EXEC]
        self._exec_starts = [s for s, _ in ranges]
        self._exec_ends = [e for _, e in ranges]

    # ---- access ----------------------------------------------------------------------------
    def read(self, addr: int, size: int) -> bytes:
        # uclib directly: the binding's mem_read builds a buffer, then a bytearray of it (and
        # bytes() copied that again); small reads (arguments, syscall structs) share one buffer.
        buffer = self._small if size <= _SMALL_READ else ctypes.create_string_buffer(size)
        if uclib.uc_mem_read(self._uc._uch, addr, buffer, size) != UC_ERR_OK:
            raise MemoryAccessError(addr, size)
        return buffer.raw[:size]

    def write(self, addr: int, data: bytes) -> None:
        """Write guest memory; drops stale translations when the range holds code."""
        if self._host_backed:
            host = self._host_buffer(addr, len(data))
            if host is not None:
                ctypes.memmove(host, data, len(data))
                return
        try:
            self._uc.mem_write(addr, data)
        except UcError:
            raise MemoryAccessError(addr, len(data)) from None
        if self._touches_exec(addr, addr + len(data)):
            self._uc.ctl_remove_cache(addr, addr + len(data))

    def _touches_exec(self, lo: int, hi: int) -> bool:
        i = bisect.bisect_right(self._exec_starts, hi - 1) - 1
        return i >= 0 and self._exec_ends[i] > lo

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
