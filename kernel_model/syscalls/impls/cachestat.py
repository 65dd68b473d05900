"""cachestat (mm/filemap.c SYSCALL_DEFINE4(cachestat), Linux 6.5): how many pages of a file's
range are in the page cache, and how many of those are dirty, under writeback, evicted or
recently evicted.

The model keeps every file whole in memory and never writes back or evicts, so the cached pages
are the pages that hold data (a hole of a sparse file has none: fs/openfile.py data_pages) and
the other counts are 0. The checks are Linux's, in its order: the fd (EBADF), the range read
from the caller (EFAULT), flags (EINVAL), the answer written back (EFAULT). A file that is not
regular (a pipe, a socket) has no pages: zeros, as its empty address space gives on Linux.

struct cachestat_range { u64 off, len; } and struct cachestat { u64 nr_cache, nr_dirty,
nr_writeback, nr_evicted, nr_recently_evicted; } (include/uapi/linux/mman.h) are the same on both
ABIs. A length of 0 means to the end of the file.
"""
import struct

from ... import errno as E
from ...errno import GuestErrno
from ..kinds import K
from ..registry import syscall

PAGE_SHIFT = 12
LAST_INDEX = (1 << 64) - 1                 # ULONG_MAX: the range reaches the end of the file


@syscall("cachestat", args=(("fd", K.FD), ("cstat_range", K.PTR), ("cstat", K.PTR),
                            ("flags", K.HEX)))
def sys_cachestat(ctx, fd, cstat_range, cstat, flags):
    f = ctx.proc.fds.get(ctx.int32(fd))
    if getattr(getattr(getattr(f, "node", None), "ctx", None), "huge_pages", False):
        raise GuestErrno(E.EOPNOTSUPP)              # is_file_hugepages: a hugetlbfs file
    off, length = struct.unpack("<QQ", ctx.read(cstat_range, 16))
    if flags:
        raise GuestErrno(E.EINVAL)
    first = off >> PAGE_SHIFT
    last = LAST_INDEX if length == 0 else (off + length - 1) >> PAGE_SHIFT
    cached = f.data_pages(first, last) if hasattr(f, "data_pages") else 0
    ctx.write(cstat, struct.pack("<5Q", cached, 0, 0, 0, 0))
    return 0
