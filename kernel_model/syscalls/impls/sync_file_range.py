"""sync_file_range (fs/sync.c ksys_sync_file_range -> sync_file_range): starts or waits for the
write-back of part of a file. The model has no dirty pages to write, so after Linux's checks
the call succeeds.

The checks, in Linux's order: EBADF for an fd fdget() does not find (closed, O_PATH); EINVAL
for flags outside SYNC_FILE_RANGE_WAIT_BEFORE | WRITE | WAIT_AFTER, a negative offset, or an
offset + nbytes that is negative or wraps; ESPIPE for a file that is not regular, a block
device, a directory or a symlink (pipes, sockets, character devices such as /dev/null).

i386 passes both loff_t values as two halves, low first (ia32_sync_file_range).
"""
from ... import errno as E
from ...errno import GuestErrno
from ...fs.constants import S_IFBLK, S_IFDIR, S_IFLNK, S_IFMT, S_IFREG
from ..kinds import K
from ..registry import syscall

VALID_FLAGS = 1 | 2 | 4            # SYNC_FILE_RANGE_WAIT_BEFORE | _WRITE | _WAIT_AFTER
WITH_PAGES = (S_IFREG, S_IFBLK, S_IFDIR, S_IFLNK)


def _signed64(value: int) -> int:
    value &= 2**64 - 1
    return value - 2**64 if value >> 63 else value


def sync_file_range(ctx, fd: int, offset: int, nbytes: int, flags: int) -> int:
    f = ctx.proc.fds.get_usable(ctx.int32(fd))
    offset, nbytes = _signed64(offset), _signed64(nbytes)
    if flags & 0xFFFFFFFF & ~VALID_FLAGS:
        raise GuestErrno(E.EINVAL)
    end = _signed64(offset + nbytes)             # loff_t arithmetic: wraps as Linux's does
    if offset < 0 or end < 0 or end < offset:
        raise GuestErrno(E.EINVAL)
    if f.stat().mode & S_IFMT not in WITH_PAGES:
        raise GuestErrno(E.ESPIPE)
    return 0


@syscall("sync_file_range", args=(("fd", K.FD), ("offset", K.LONG), ("nbytes", K.LONG),
                                  ("flags", K.HEX)),
         i386=(("fd", K.FD), ("offset", K.OFFSET64_SPLIT), ("nbytes", K.OFFSET64_SPLIT),
               ("flags", K.HEX)))
def sys_sync_file_range(ctx, fd, a1, a2, a3, a4, a5):
    if ctx.abi == "x86_64":                        # (fd, offset, nbytes, flags)
        return sync_file_range(ctx, fd, a1, a2, a3)
    return sync_file_range(ctx, fd, a1 | a2 << 32, a3 | a4 << 32, a5)
