"""readahead (mm/readahead.c ksys_readahead): asks the page cache to read part of a file ahead.
The model has no page cache to fill, so after Linux's checks the call succeeds: EBADF for an
fd that is not open for reading (O_WRONLY, O_PATH), EINVAL for a file that is not regular
(pipes, sockets, directories, devices: no address_space operations to read with).

i386 passes the loff_t offset as two halves, low first (ia32_readahead).
"""
from ... import errno as E
from ...errno import GuestErrno
from ...fs.constants import O_ACCMODE, O_PATH, O_RDONLY, O_WRONLY, S_IFMT, S_IFREG
from ..kinds import K
from ..registry import syscall


@syscall("readahead", args=(("fd", K.FD), ("offset", K.LONG), ("count", K.ULONG)),
         i386=(("fd", K.FD), ("offset_low", K.ULONG), ("offset_high", K.ULONG),
               ("count", K.ULONG)))
def sys_readahead(ctx, fd, *_offset_and_count):
    f = ctx.proc.fds.get(ctx.int32(fd))
    flags = getattr(f, "flags", O_RDONLY)
    if flags & O_PATH or flags & O_ACCMODE == O_WRONLY:
        raise GuestErrno(E.EBADF)                  # !(f_mode & FMODE_READ)
    if f.stat().mode & S_IFMT != S_IFREG:
        raise GuestErrno(E.EINVAL)
    return 0
