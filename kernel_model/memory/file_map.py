"""The checks do_mmap (mm/mmap.c) makes of a file before it maps it, in its order.

A MAP_SHARED_VALIDATE mapping refuses flags the kernel does not know (EOPNOTSUPP: the point
of the type, added in Linux 4.15 for MAP_SYNC) where MAP_SHARED ignores them; a shared
writable mapping needs a file open for writing, any mapping one open for reading (EACCES);
a file without an mmap operation (anything but a regular file or a character device here)
cannot be mapped (ENODEV).
"""
from .. import errno as E
from ..errno import GuestErrno
from .vm import MAP_SHARED_VALIDATE, MAP_TYPE, PROT_WRITE

# include/linux/mman.h LEGACY_MAP_MASK: the flags every kernel since 4.15 accepts, and the
# only ones MAP_SHARED_VALIDATE lets through (MAP_SYNC needs a DAX file, which none is here).
LEGACY_MAP_MASK = (0x01 | 0x02 | 0x10 | 0x20           # SHARED PRIVATE FIXED ANONYMOUS
                   | 0x40                               # 32BIT (x86)
                   | 0x100 | 0x800 | 0x1000 | 0x2000    # GROWSDOWN DENYWRITE EXECUTABLE LOCKED
                   | 0x4000 | 0x8000 | 0x10000 | 0x20000   # NORESERVE POPULATE NONBLOCK STACK
                   | 0x40000 | 0x100000 | 0x4000000     # HUGETLB FIXED_NOREPLACE UNINITIALIZED
                   | 0x3F << 26)                        # the MAP_HUGE_* size field
S_IFMT, S_IFREG, S_IFCHR = 0o170000, 0o100000, 0o020000


def check_file_map(f, prot: int, flags: int) -> None:
    """Raise do_mmap's error for mapping open file `f` with `prot` and `flags`, if any."""
    if flags & MAP_TYPE != 0x02:                          # MAP_SHARED or MAP_SHARED_VALIDATE
        if flags & MAP_TYPE == MAP_SHARED_VALIDATE and flags & ~LEGACY_MAP_MASK:
            raise GuestErrno(E.EOPNOTSUPP)
        if prot & PROT_WRITE and not getattr(f, "writable", False):
            raise GuestErrno(E.EACCES)
    if not getattr(f, "readable", True):
        raise GuestErrno(E.EACCES)
    if hasattr(f, "mmap_backing"):
        return                      # a file of its own pages (an io_uring's rings)
    if not hasattr(f, "pread") or f.stat().mode & S_IFMT not in (S_IFREG, S_IFCHR):
        raise GuestErrno(E.ENODEV)
