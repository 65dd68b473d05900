"""The ELF objects mapped in an address space: the program, its interpreter, shared libraries.

What Linux keeps implicitly in the VMAs' files and what a tool reads from /proc/PID/maps and
the link map (gdb's `info sharedlibrary`, uprobes' inode + offset): for each object, the file
it came from and where it was put (its load bias). exec records the program and ld.so; a
file mapping made executable afterwards (ld.so's mmap of a library's text, a dlopen) records a
library and announces it on the debug interface ("image mapped"), so that a probe on a library
not loaded yet is placed the moment its code is there. munmap of an object's first page forgets
it (dlclose).

The LoadedImage of a library (its symbols, its segments) is built only when a tool asks: a run
without probes never parses libc.
"""
from __future__ import annotations

import bisect
from typing import Callable

from loader.elf import load_elf
from loader.errors import LoaderError

from .errno import GuestErrno
from .fs.constants import O_RDONLY
from .fsview import global_view


class MappedImage:
    """One object in one address space. `image` is a loader.LoadedImage relocated to `base`,
    or None when the file cannot be read or parsed any more."""
    __slots__ = ("path", "base", "end", "_image", "_read")

    def __init__(self, path: bytes, base: int, end: int, *, image=None,
                 read: Callable[[], bytes] | None = None):
        self.path, self.base, self.end = path, base, end
        self._image, self._read = image, read

    @property
    def name(self) -> str:
        """The file name, as records and reports show it ("libc.so.6")."""
        return self.path.rsplit(b"/", 1)[-1].decode(errors="replace")

    @property
    def image(self):
        if self._image is None and self._read is not None:
            read, self._read = self._read, None
            try:
                self._image = load_elf(read(), self.path.decode(errors="replace"),
                                       pie_base=self.base, shared_object=True)
            except (LoaderError, GuestErrno, OSError):   # gone, changed, or no ELF any more
                self._image = None
        return self._image

    def __repr__(self) -> str:
        return f"MappedImage({self.path!r}, {self.base:#x}-{self.end:#x})"


class ImageMap:
    """The objects of one address space, by base address."""

    def __init__(self, images: list[MappedImage] | None = None):
        self._images: list[MappedImage] = sorted(images or [], key=lambda m: m.base)
        self.version = 0        # changes with every object added or forgotten

    def add(self, mapped: MappedImage) -> None:
        self.forget(mapped.base, mapped.base + 1)
        bisect.insort(self._images, mapped, key=lambda m: m.base)
        self.version += 1

    def forget(self, start: int, end: int) -> list[MappedImage]:
        """Drop the objects whose first page lies in [start, end) (munmap, MAP_FIXED over it);
        returns them."""
        gone = [m for m in self._images if start <= m.base < end]
        if gone:
            self._images = [m for m in self._images if not start <= m.base < end]
            self.version += 1
        return gone

    def at(self, address: int) -> MappedImage | None:
        i = bisect.bisect_right(self._images, address, key=lambda m: m.base) - 1
        if i >= 0 and address < self._images[i].end:
            return self._images[i]
        return None

    def find(self, path: bytes) -> MappedImage | None:
        return next((m for m in self._images if m.path == path), None)

    def copy(self) -> "ImageMap":
        """fork: the child has the same objects at the same places."""
        return ImageMap(list(self._images))

    def __iter__(self):
        return iter(list(self._images))

    def __len__(self) -> int:
        return len(self._images)


def _object_base(vmas, path: bytes, start: int, offset: int) -> int:
    """Where the object whose file `path` is mapped at `start` (file offset `offset`) begins:
    the start of the contiguous run of its mappings below, at file offset 0 (ld.so first maps
    the whole span from offset 0, then maps each segment over it with MAP_FIXED); without one,
    where offset 0 would be."""
    by_end = {vma.end: vma for vma in vmas if vma.name == path}
    lowest = start
    while lowest in by_end:
        lowest = by_end[lowest].start
    below = [vma for vma in vmas if vma.name == path and lowest <= vma.start < start]
    zero = [vma.start for vma in below if vma.offset == 0]
    return min(zero) if zero else start - offset


def _object_end(vmas, path: bytes, base: int) -> int:
    """The end of the contiguous run of `path`'s mappings from `base` (the object's span)."""
    end = base
    for vma in sorted(vmas, key=lambda v: v.start):
        if vma.start == end and vma.name == path:
            end = vma.end
    return end


def _file_reader(kernel, proc, path: bytes) -> Callable[[], bytes]:
    """Reads the object's file when a tool first asks for its image: by its global path (an
    open file's path is global, kernel_model/fsview.py), since the guest usually closes the
    descriptor right after mapping. Nothing is read, or kept, for a run nobody inspects."""
    def read() -> bytes:
        f = kernel.fs.open(path, O_RDONLY, 0, b"/", global_view(proc))
        try:
            return f.pread(f.stat().size, 0)
        finally:
            f.close()
    return read


def record_unmapping(kernel, proc, start: int, end: int) -> None:
    """[start, end) was unmapped from `proc`: the objects whose first page it held are gone
    (dlclose); announce each (the profiler's module-unload records, US 7,823,129)."""
    for mapped in proc.space.images.forget(start, end):
        kernel.debug.image_unmapped(proc, mapped)


def record_library_mapping(kernel, proc, start: int, offset: int, open_file) -> None:
    """An executable file mapping was made in `proc` (kernel_model/syscalls/impls/memory.py):
    note its object and announce it."""
    space = proc.space
    path = open_file.path
    known = space.images.at(start)
    if known is not None and known.path == path:
        return                                    # another executable segment of it
    vmas = space.vm.vmas
    base = _object_base(vmas, path, start, offset)
    end = max(_object_end(vmas, path, base), start + 1)
    mapped = MappedImage(path, base, end, read=_file_reader(kernel, proc, path))
    space.images.add(mapped)
    kernel.debug.image_mapped(proc, mapped)
