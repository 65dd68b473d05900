"""File bytes that cost memory only where they were written: the overlay's upper layer.

Like a tmpfs file (mm/shmem.c), the data lives in fixed-size chunks (pages there) that exist only
once something was written into them: ftruncate to 2^40 bytes or a write far past the end leaves
a hole, and a hole reads as zeros. A chunk holds the bytes up to the last one written in it, so a
small file costs its size, not a whole chunk. What the chunks hold is charged to a DataBudget
(databudget.py: the run's memory budget) before it is stored, and given back when cut or freed,
by whole pages as tmpfs charges them: a run of small appends asks the budget once a page.

Which pages were written is kept per chunk (a bit a page): they are the file's data for lseek's
SEEK_DATA and SEEK_HOLE, as the pages in a tmpfs file's page cache are (shmem_file_llseek ->
mapping_seek_hole_data); a page never written, or cut by a truncate, is a hole.
"""
from ..errno import GuestErrno
from .databudget import UNLIMITED, DataBudget

CHUNK = 64 * 1024
PAGE = 4096
PAGES_PER_CHUNK = CHUNK // PAGE
FULL_CHUNK = (1 << PAGES_PER_CHUNK) - 1


def _pages(length: int) -> int:
    """What a chunk holding `length` bytes is charged: whole pages."""
    return (length + PAGE - 1) & ~(PAGE - 1)


class SparseData:
    def __init__(self, initial: bytes = b"", budget: DataBudget = UNLIMITED):
        self.size = 0
        self._chunks: dict[int, bytearray] = {}     # chunk index -> its bytes (a prefix)
        self._written: dict[int, int] = {}          # chunk index -> its written pages' bits
        self._budget = budget
        self.cost = 0                                # bytes held in chunks (charged)
        if initial:
            # A copy-up is all or nothing: the whole file fits or nothing changes (ENOSPC).
            full, rest = divmod(len(initial), CHUNK)
            cost = full * CHUNK + _pages(rest)
            budget.charge(cost)
            self.cost = cost
            self._store(0, memoryview(initial), charged=True)
            self.size = len(initial)

    def __len__(self) -> int:
        return self.size

    def __del__(self) -> None:
        try:
            self._budget.release(self.cost)
        except AttributeError:            # a constructor that failed before the fields existed
            pass

    def read(self, offset: int, n: int) -> bytes:
        end = min(self.size, offset + n)
        if offset >= end:
            return b""
        index, start = divmod(offset, CHUNK)
        if start + (end - offset) <= CHUNK:              # the common case: one chunk
            return self._piece(index, start, end - offset)
        out, pos = [], offset
        while pos < end:
            index, start = divmod(pos, CHUNK)
            take = min(CHUNK - start, end - pos)
            out.append(self._piece(index, start, take))
            pos += take
        return b"".join(out)

    def _piece(self, index: int, start: int, take: int) -> bytes:
        """`take` bytes of chunk `index` from `start`; what was never written is zero."""
        chunk = self._chunks.get(index, b"")
        piece = bytes(chunk[start:start + take])
        return piece + bytes(take - len(piece)) if len(piece) < take else piece

    def write(self, offset: int, data: bytes) -> int:
        """Store `data` at `offset`; returns how many bytes were stored. A chunk whose growth
        the budget refuses ends the write there (ENOSPC if not even the first fits)."""
        done = self._store(offset, memoryview(data), charged=False)
        if done:
            self.size = max(self.size, offset + done)
        return done

    def _store(self, offset: int, view: memoryview, charged: bool) -> int:
        pos = offset
        while view:
            index, start = divmod(pos, CHUNK)
            take = min(CHUNK - start, len(view))
            chunk = self._chunks.get(index)
            have = len(chunk) if chunk is not None else 0
            grow = _pages(start + take) - _pages(have) if start + take > have else 0
            if grow > 0 and not charged:
                try:
                    self._budget.charge(grow)
                except GuestErrno:
                    if pos == offset:
                        raise
                    break                                   # a short write: what fit stays
                self.cost += grow
            if chunk is None:
                chunk = self._chunks[index] = bytearray()
            if len(chunk) < start:
                chunk.extend(bytes(start - len(chunk)))     # a hole inside the chunk
            chunk[start:start + take] = view[:take]
            first, last = start // PAGE, (start + take - 1) // PAGE
            self._written[index] = self._written.get(index, 0) | ((2 << last) - (1 << first))
            view, pos = view[take:], pos + take
        return pos - offset

    def truncate(self, length: int) -> None:
        """Cut or extend to `length`; cut bytes are gone (they read as zeros if it grows again)."""
        if length < self.size:
            last, tail = divmod(length, CHUNK)
            freed = 0
            for index in [i for i in self._chunks if i > last or (i == last and not tail)]:
                freed += _pages(len(self._chunks.pop(index)))
                self._written.pop(index, None)
            if tail and last in self._written:          # the page holding the new end stays
                self._written[last] &= (1 << (_pages(tail) // PAGE)) - 1
            if tail and last in self._chunks and len(self._chunks[last]) > tail:
                freed += _pages(len(self._chunks[last])) - _pages(tail)
                del self._chunks[last][tail:]
            self.cost -= freed
            self._budget.release(freed)
        self.size = length

    def next_data(self, offset: int) -> int | None:
        """SEEK_DATA: `offset` if its page was written, else the start of the next written
        page; None when no data lies at or after it (ENXIO)."""
        for index in sorted(i for i in self._written if i >= offset // CHUNK):
            bits = self._written[index]
            for bit in range(PAGES_PER_CHUNK):
                start = index * CHUNK + bit * PAGE
                if bits >> bit & 1 and start + PAGE > offset:
                    found = max(start, offset)
                    return found if found < self.size else None
        return None

    def next_hole(self, offset: int) -> int:
        """SEEK_HOLE: `offset` if its page was never written, else the start of the next such
        page; the end of the file at the latest (the virtual hole every file ends with)."""
        page = offset // PAGE
        while page * PAGE < self.size:
            index, bit = divmod(page, PAGES_PER_CHUNK)
            bits = self._written.get(index, 0)
            if not bits >> bit & 1:
                return min(max(page * PAGE, offset), self.size)
            page = (index + 1) * PAGES_PER_CHUNK if bits == FULL_CHUNK else page + 1
        return self.size
