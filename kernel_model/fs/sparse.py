"""File bytes that cost memory only where they were written: the overlay's upper layer.

Like a tmpfs file (mm/shmem.c), the data lives in fixed-size chunks (pages there) that exist only
once something was written into them: ftruncate to 2^40 bytes or a write far past the end leaves
a hole, and a hole reads as zeros. A chunk holds the bytes up to the last one written in it, so a
small file costs its size, not a whole chunk.
"""
CHUNK = 64 * 1024


class SparseData:
    def __init__(self, initial: bytes = b""):
        self.size = 0
        self._chunks: dict[int, bytearray] = {}     # chunk index -> its bytes (a prefix)
        self.write(0, initial)

    def __len__(self) -> int:
        return self.size

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

    def write(self, offset: int, data: bytes) -> None:
        view, pos = memoryview(data), offset
        while view:
            index, start = divmod(pos, CHUNK)
            take = min(CHUNK - start, len(view))
            chunk = self._chunks.setdefault(index, bytearray())
            if len(chunk) < start:
                chunk.extend(bytes(start - len(chunk)))     # a hole inside the chunk
            chunk[start:start + take] = view[:take]
            view, pos = view[take:], pos + take
        if data:
            self.size = max(self.size, offset + len(data))

    def truncate(self, length: int) -> None:
        """Cut or extend to `length`; cut bytes are gone (they read as zeros if it grows again)."""
        if length < self.size:
            last, tail = divmod(length, CHUNK)
            for index in [i for i in self._chunks if i > last or (i == last and not tail)]:
                del self._chunks[index]
            if tail and last in self._chunks:
                del self._chunks[last][tail:]
        self.size = length
