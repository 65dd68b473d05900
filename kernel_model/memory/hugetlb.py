"""Huge pages (mm/hugetlb.c, fs/hugetlbfs/inode.c): a kernel-wide pool of 2 MiB pages that
vm.nr_hugepages sizes, taken by MAP_HUGETLB mappings and memfd_create(MFD_HUGETLB) files.

A mapping's pages are reserved from the pool when it is made (hugetlb_reserve_pages: ENOMEM
when the pool has too few free) and go back when the last mapping of them goes. Its length
is rounded up to the huge page size and its start aligned to it; munmap or mprotect that
would split it inside a huge page is EINVAL (hugetlb_vm_op_split). x86-64 has two sizes,
2 MiB (the default, hstate of Hugepagesize) and 1 GiB (X86_FEATURE_GBPAGES), whose pool stays
empty; any other MAP_HUGE_*/MFD_HUGE_* size is EINVAL or ENODEV.
"""
from emu.shared_pages import SharedPages

from .. import errno as E
from ..errno import GuestErrno
from ..fs.constants import BLOCK_SIZE, O_RDWR
from ..fs.records import StatResult
from .layout import PAGE

HPAGE = 2 << 20                          # HPAGE_SIZE, /proc/meminfo's Hugepagesize
HSTATES = {21: HPAGE, 30: 1 << 30}      # page_size_log -> size
MAP_HUGETLB = 0x40000
HUGE_SHIFT, HUGE_MASK = 26, 0x3F        # MAP_HUGE_SHIFT / MFD_HUGE_SHIFT and their mask
HUGETLBFS_DEV = 0x10                    # st_dev of the internal hugetlbfs mount


def huge_size(flags: int) -> int | None:
    """The page size a MAP_HUGE_*/MFD_HUGE_* field asks (0: the default), None if none."""
    log = (flags >> HUGE_SHIFT) & HUGE_MASK
    return HPAGE if not log else HSTATES.get(log)


def align_up(n: int, to: int) -> int:
    return (n + to - 1) // to * to


class HugePool:
    """The default size's hstate: nr_huge_pages and the pages taken (reserved or in use)."""

    def __init__(self):
        self.total = 0
        self.used = 0

    def take(self, size: int, page_size: int) -> SharedPages:
        """Pages for a mapping of `size` bytes, reserved from the pool (ENOMEM), given back
        when their last holder lets go. The 1 GiB pool is always empty."""
        count = size // page_size
        if page_size != HPAGE or count > self.total - self.used:
            raise GuestErrno(E.ENOMEM)
        self.used += count

        def give_back(_pages) -> None:
            self.used -= count
        return SharedPages(size, on_release=give_back)

    def set_total(self, value: int) -> None:
        """set_max_huge_pages: the pool shrinks no further than the pages in use."""
        self.total = max(value, self.used)

    def meminfo(self) -> bytes:
        """fs/proc/meminfo.c's hugetlb_report_meminfo lines."""
        free = self.total - self.used
        return (b"HugePages_Total:   %5d\nHugePages_Free:    %5d\nHugePages_Rsvd:    %5d\n"
                b"HugePages_Surp:    %5d\nHugepagesize:   %8d kB\nHugetlb:        %8d kB\n"
                % (self.total, free, 0, 0, HPAGE >> 10, self.total * (HPAGE >> 10)))


class HugetlbFile:
    """A hugetlbfs file without a name (memfd_create with MFD_HUGETLB): no write(2) (EINVAL:
    hugetlbfs has no write_iter), mapped with huge pages; a mapping past its end extends it
    (hugetlbfs_file_mmap), and its pages are the file's for every shared mapping."""
    is_tty = False
    readable = writable = True

    def __init__(self, pool: HugePool, name: bytes, page_size: int, ino: int):
        self.pool, self.huge_page_size, self.ino = pool, page_size, ino
        self.path = self.proc_link = b"/memfd:" + name + b" (deleted)"
        self.flags = O_RDWR
        self.closed = False
        self.size = 0
        self.position = 0
        self.pages: dict[int, SharedPages] = {}     # huge page index -> its pages

    def page(self, index: int) -> SharedPages:
        if index not in self.pages:
            pages = self.pool.take(self.huge_page_size, self.huge_page_size)
            pages.hold()
            self.pages[index] = pages
        return self.pages[index]

    def read(self, n: int) -> bytes:
        data = self.pread(n, self.position)
        self.position += len(data)
        return data

    def pread(self, n: int, off: int) -> bytes:
        out = bytearray()
        while n > 0 and off < self.size:
            index, at = divmod(off, self.huge_page_size)
            take = min(n, self.huge_page_size - at, self.size - off)
            pages = self.pages.get(index)
            out += pages.read(at, take) if pages is not None else bytes(take)
            off, n = off + take, n - take
        return bytes(out)

    def write(self, data: bytes) -> int:
        raise GuestErrno(E.EINVAL)

    pwrite = lambda self, data, off: self.write(data)        # noqa: E731

    def seek(self, off: int, whence: int) -> int:
        base = (0, self.position, self.size)[whence] if 0 <= whence <= 2 else None
        if base is None or base + off < 0:
            raise GuestErrno(E.EINVAL)
        self.position = base + off
        return self.position

    def truncate(self, length: int) -> None:
        self.size = align_up(length, self.huge_page_size)

    def stat(self) -> StatResult:
        return StatResult(HUGETLBFS_DEV, self.ino, 0o100777, 0, 0, 0, 0, self.size,
                          self.huge_page_size, self.size // 512, 0, 0, 0)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            for pages in self.pages.values():
                pages.drop()


class AnonHuge:
    """The vm_file of an anonymous MAP_HUGETLB area (hugetlb_file_setup's unnamed file)."""
    def __init__(self, page_size: int):
        self.huge_page_size = page_size

    def stat(self) -> StatResult:
        return StatResult(HUGETLBFS_DEV, 0, 0o100600, 0, 0, 0, 0, 0, self.huge_page_size, 0,
                          0, 0, 0)


def map_huge(ctx, pool: HugePool, addr: int, length: int, prot: int, flags: int, offset: int,
             f=None) -> int:
    """mmap of huge pages: `f` a HugetlbFile, or None for MAP_HUGETLB anonymous memory."""
    page_size = f.huge_page_size if f is not None else huge_size(flags)
    if page_size is None or offset % (page_size if f is not None else PAGE):
        raise GuestErrno(E.EINVAL)
    size, vm = align_up(length, page_size), ctx.vm
    if flags & 0x10:                                   # MAP_FIXED
        if addr % page_size:
            raise GuestErrno(E.EINVAL)
        start = addr
    else:
        start = align_up(vm.find_free(size + page_size), page_size)
    shared = flags & 0x0F in (0x01, 0x03)
    if f is not None and shared:
        first = offset // page_size
        backing = [(f.page(first + i), 0, page_size) for i in range(size // page_size)]
    else:
        pages = pool.take(size, page_size)
        if f is not None:
            pages.write(0, f.pread(size, offset))
        backing = [(pages, 0, size)]
    if f is not None:
        f.size = max(f.size, offset + size)
    vm.map_shared_area(start, size, prot, backing, offset=offset, file=f or AnonHuge(page_size),
                       name=f.path if f is not None else b"/anon_hugepage (deleted)")
    if not shared:
        vm.rename_area(vm.vma_at(start), shared=False)
    return start


def check_huge_edges(vm, start: int, end: int) -> None:
    """hugetlb_vm_op_split: a huge page area may only be cut at a huge page boundary."""
    for vma in vm.vmas_overlapping(start, end):
        page_size = getattr(vma.file, "huge_page_size", None)
        if page_size is None:
            continue
        for edge in (start, end):
            if vma.start < edge < vma.end and (edge - vma.start) % page_size:
                raise GuestErrno(E.EINVAL)
