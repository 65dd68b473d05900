"""The page cache of shared file mappings: one copy of a file's mapped pages for every process.

Linux keeps a file's pages in its address_space (mm/filemap.c), and every MAP_SHARED mapping
of the file maps those very pages, so a store through one mapping is seen through every other,
in any process, whatever fd or path it was opened by. Here a file's mapped bytes live in
extents: SharedPages (emu/shared_pages.py) each holding a page-aligned run of the file, keyed
by the file's identity (st_dev, st_ino). A new mapping reuses the extents that cover its range
and makes new ones for the gaps, filled from the file.

The file's own data (the overlay's, fs/) is a separate copy: the mapped bytes are written back
to it by msync, by munmap, and when the last mapping of an extent goes (exit, exec) — Linux's
writeback of dirty pages. A new MAP_PRIVATE mapping of the file starts from the shared pages'
bytes (`cached`). While a file has extents, its read(2) and write(2) go through them as
Linux's go through the one page cache (mm/filemap.c filemap_read, generic_perform_write): the
file's node holds a _MappedFile view (fs/overlay.py OverlayFile.mapped_pages) that lays the
extents' bytes over what a read returns and copies what a write stores into them (LTP msync02:
a write(2) after mmap must show in the mapping). Not modeled: SIGBUS beyond EOF.
"""
from dataclasses import dataclass

from emu.shared_pages import SharedPages

from ..errno import GuestErrno
from ..fs.constants import O_RDWR
from .layout import PAGE


@dataclass
class Extent:
    offset: int            # file offset of the first byte
    pages: SharedPages
    writer: object = None  # a handle of the file of its own (vm_file's reference), or None

    @property
    def end(self) -> int:
        return self.offset + self.pages.size


def _writer_for(f):
    """A handle of f's file that stays open as long as the mapping (Linux's vma holds its
    struct file: closing the fd does not end the mapping), when f was opened for writing."""
    if not f.writable or f.node is None:
        return None
    try:
        return f.node.open_handle(O_RDWR)
    except GuestErrno:
        return None


def write_back(extent: Extent, lo: int, hi: int) -> None:
    """Write file bytes [lo, hi) held by `extent` to the file, never past its end (Linux
    writes back whole pages but i_size bounds what the file holds)."""
    writer = extent.writer
    if writer is None:
        return
    hi = min(hi, extent.end, writer.size())
    lo = max(lo, extent.offset)
    if hi > lo:
        # The kernel's own write-back, which a sealed memfd's seals do not refuse (they
        # refuse writers, fs/memfd.py)
        write = getattr(writer, "write_back_at", writer.write_at)
        write(lo, extent.pages.read(lo - extent.offset, hi - lo))


class _MappedFile:
    """A file's read(2) and write(2) as they meet its shared pages (the extents of one key)."""

    def __init__(self, extents: list[Extent]):
        self._extents = extents

    def read(self, offset: int, data: bytes) -> bytes:
        """`data`, the file's bytes at `offset`, with the extents' bytes where they hold any
        (stores through a mapping not yet written back)."""
        out = None
        for extent in self._extents:
            lo, hi = max(offset, extent.offset), min(offset + len(data), extent.end)
            if lo < hi:
                out = bytearray(data) if out is None else out
                out[lo - offset:hi - offset] = extent.pages.read(lo - extent.offset, hi - lo)
        return data if out is None else bytes(out)

    def written(self, offset: int, data: bytes) -> None:
        """The file's bytes at `offset` are now `data`: so are the extents' that hold them."""
        for extent in self._extents:
            lo, hi = max(offset, extent.offset), min(offset + len(data), extent.end)
            if lo < hi:
                extent.pages.write(lo - extent.offset, data[lo - offset:hi - offset])


class PageCache:
    def __init__(self):
        self._extents: dict[tuple[int, int], list[Extent]] = {}    # sorted by offset
        self._by_serial: dict[int, Extent] = {}     # SharedPages.serial -> its extent
        self._nodes: dict[tuple[int, int], object] = {}   # key -> the node given a _MappedFile

    def backing(self, f, offset: int, size: int) -> list:
        """(SharedPages, offset in it, length) covering file bytes [offset, offset+size), in
        order, for vm.map_shared_area: the file's extents where they exist, new ones (read from
        `f`) in the gaps."""
        key = self._key(f)
        extents = self._extents.setdefault(key, [])
        pieces, at, end = [], offset, offset + size
        while at < end:
            extent = next((e for e in extents if e.offset <= at < e.end), None)
            if extent is None:
                gap_end = min([e.offset for e in extents if e.offset > at] + [end])
                extent = self._new_extent(key, f, at, gap_end - at)
            elif extent.writer is None:
                extent.writer = _writer_for(f)
            length = min(extent.end, end) - at
            pieces.append((extent.pages, at - extent.offset, length))
            at += length
        return pieces

    def cached(self, f, offset: int, data: bytes) -> bytes:
        """`data`, file bytes read from `offset`, with the bytes of the file's shared pages
        where it has any: what a MAP_PRIVATE mapping of the file starts with (Linux maps the
        page cache's pages until the first write copies them)."""
        extents = self._extents.get(self._key(f))
        if not extents:
            return data
        out = bytearray(data)
        for extent in extents:
            lo, hi = max(offset, extent.offset), min(offset + len(out), extent.end)
            if lo < hi:
                out[lo - offset:hi - offset] = extent.pages.read(lo - extent.offset, hi - lo)
        return bytes(out)

    def sync_mapped(self, mem, addr: int, size: int) -> None:
        """Write back what guest range [addr, addr+size) of Memory `mem` maps of files
        (msync; munmap before the pages go)."""
        for lo, hi, pages, offset in mem.shared_pieces(addr, size):
            extent = self._by_serial.get(pages.serial)
            if extent is not None:
                start = extent.offset + offset
                write_back(extent, start, start + (hi - lo))

    @staticmethod
    def _key(f) -> tuple[int, int]:
        st = f.stat()
        return st.dev, st.ino

    def _new_extent(self, key, f, offset: int, size: int) -> Extent:
        assert offset % PAGE == 0 and size % PAGE == 0
        pages = SharedPages(size)
        extent = Extent(offset, pages, _writer_for(f))
        data = f.pread(size, offset) if f.readable else b""
        if data:
            pages.write(0, data)
        pages.on_release = lambda _pages: self._released(key, extent)
        self._by_serial[pages.serial] = extent
        extents = self._extents[key]
        extents.append(extent)
        extents.sort(key=lambda e: e.offset)
        node = f.node
        if key not in self._nodes and hasattr(node, "mapped_pages"):
            node.mapped_pages = _MappedFile(extents)
            self._nodes[key] = node
        return extent

    def _released(self, key, extent: Extent) -> None:
        """The last mapping of `extent` is gone: its bytes go back to the file, then away."""
        write_back(extent, extent.offset, extent.end)
        if extent.writer is not None:
            extent.writer.close()
        self._by_serial.pop(extent.pages.serial, None)
        extents = self._extents.get(key, [])
        if extent in extents:
            extents.remove(extent)
        if not extents:
            self._extents.pop(key, None)
            node = self._nodes.pop(key, None)
            if node is not None:
                node.mapped_pages = None
