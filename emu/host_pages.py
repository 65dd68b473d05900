"""Host pages that back guest RAM: anonymous private mappings of the host, through libc.

Guest memory lives in host mappings that Unicorn is handed with uc_mem_map_ptr, instead of RAM
Unicorn allocates itself, because then the host can do three things the API cannot:
  - copy an address space as plain memory (fork): one memmove per run of touched pages, and
    the pages the parent never touched (most of an 8 MiB stack) are not copied at all;
  - give pages back the moment the guest unmaps them or its process ends (munmap), without
    waiting for the Uc object to be garbage-collected;
  - read and write guest memory without a call into Unicorn (ctypes.string_at / memmove).

The mappings are MAP_PRIVATE|MAP_ANONYMOUS|MAP_NORESERVE: zero-filled, costing no RSS until a
page is written, and not charged to the host's overcommit until touched (a guest's 8 MiB stack
or 1 GiB reservation is free). mincore(2) tells which pages have been touched.
"""
import ctypes
import os
import re

PAGE = 0x1000
_PROT_READ_WRITE = 0x1 | 0x2
_MAP_PRIVATE, _MAP_ANONYMOUS, _MAP_NORESERVE = 0x02, 0x20, 0x4000
_MAP_FAILED = ctypes.c_void_p(-1).value
_LOW_BIT = bytes(i & 1 for i in range(256))
_RESIDENT_RUN = re.compile(b"\x01+")

# The interpreter is linked against libc: its own symbols serve (find_library would spawn ldconfig).
_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                       ctypes.c_long)
_libc.munmap.restype = ctypes.c_int
_libc.munmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
_libc.mincore.restype = ctypes.c_int
_libc.mincore.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p)


_libc.madvise.restype = ctypes.c_int
_libc.madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
_MADV_HUGEPAGE, _MADV_POPULATE_WRITE = 14, 23
HUGE_PAGE = 2 << 20
_PREFAULT_RUN = 16 * PAGE
_libc.memcmp.restype = ctypes.c_int
_libc.memcmp.argtypes = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)


class HostMemoryError(OSError):
    """The host refused a mapping (address space or memory exhausted)."""


def allocate(size: int) -> int:
    """A zero-filled host range of `size` bytes (a multiple of the page size); its address."""
    address = _libc.mmap(None, size, _PROT_READ_WRITE, _MAP_PRIVATE | _MAP_ANONYMOUS | _MAP_NORESERVE,
                         -1, 0)
    if address in (None, _MAP_FAILED):
        error = ctypes.get_errno()
        raise HostMemoryError(error, f"host mmap of {size:#x} bytes: {os.strerror(error)}")
    return address


def free(address: int, size: int) -> None:
    """Give [address, address+size) back to the host (any page-aligned part of an allocation)."""
    if _libc.munmap(address, size) != 0:
        error = ctypes.get_errno()
        raise HostMemoryError(error, f"host munmap at {address:#x}: {os.strerror(error)}")


def touched_runs(address: int, size: int):
    """(offset, length) of each run of pages in [address, address+size) that the host has
    materialised (mincore: resident). Pages never written nor read are absent, and zero."""
    pages = size // PAGE
    vector = ctypes.create_string_buffer(pages)
    if _libc.mincore(address, size, vector) != 0:
        yield 0, size                     # cannot tell: every page may hold data
        return
    # mincore's low bit says resident; the others are reserved. One regex pass finds the runs.
    for run in _RESIDENT_RUN.finditer(vector.raw.translate(_LOW_BIT)):
        yield run.start() * PAGE, (run.end() - run.start()) * PAGE


def resident(address: int, size: int) -> bytes:
    """One byte a page of [address, address+size): 1 where the host has materialised the page
    (written, or read: a read maps the zero page), else 0. Where the host cannot tell, 1."""
    pages = size // PAGE
    vector = ctypes.create_string_buffer(pages)
    if _libc.mincore(address, size, vector) != 0:
        return b"\x01" * pages
    return vector.raw[:pages].translate(_LOW_BIT)


def populate(view: memoryview, lo: int, hi: int) -> None:
    """Make the pages of view[lo:hi] the host's (each written with the byte it holds): mlock's
    and MAP_POPULATE's pre-faulting (mm/gup.c populate_vma_page_range)."""
    for at in range(lo, hi, PAGE):
        view[at] = view[at]


def copy(destination: int, source: int, size: int) -> None:
    """Copy the touched pages of [source, source+size) to destination (a fresh, zero range).

    Copying into fresh pages costs a host page fault per 4 KiB page, more than the copy itself
    (bench/fork_exec.py forks a shell holding 4 MiB). So the destination
    is prepared per run of touched pages, best effort (an older kernel refuses the advice with
    EINVAL, and the copy faults as before):
      - a run of at least HUGE_PAGE is advised MADV_HUGEPAGE: the 2 MiB-aligned chunks lying
        wholly inside it, and only those, are faulted in as one huge page each. They are fully
        touched in the source, so the child holds no byte more than a page-by-page copy would
        (and far fewer faults; unmapping them is cheaper too);
      - a run of at least _PREFAULT_RUN is populated with MADV_POPULATE_WRITE (Linux 5.14):
        the kernel faults its pages in one call instead of one trap each."""
    for offset, length in touched_runs(source, size):
        target = destination + offset
        if length >= HUGE_PAGE:
            _libc.madvise(target, length, _MADV_HUGEPAGE)
        if length >= _PREFAULT_RUN:
            _libc.madvise(target, length, _MADV_POPULATE_WRITE)
        ctypes.memmove(target, source + offset, length)


def equal(address: int, other, size: int) -> bool:
    """Whether host [address, address+size) holds the same bytes as `other` (a host address,
    or a bytes object): memcmp, without copying either side into a Python object."""
    if isinstance(other, bytes):
        other = ctypes.cast(ctypes.c_char_p(other), ctypes.c_void_p).value
    return _libc.memcmp(address, other, size) == 0
