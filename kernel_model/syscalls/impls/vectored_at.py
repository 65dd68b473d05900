"""preadv, pwritev, preadv2, pwritev2 (fs/read_write.c do_preadv, do_pwritev): readv and
writev at an offset, which the file's position does not follow.

The offset comes in two words on both ABIs (pos_l, pos_h: x86-64 uses pos_l alone, i386 joins
them). A negative offset is EINVAL before the descriptor is looked at; a file without
positions (a pipe, a socket) is ESPIPE. The v2 calls take RWF_* flags (an unknown one is
EOPNOTSUPP) and an offset of -1, which means the file position, as readv and writev.
"""
from ... import errno as E
from ...errno import GuestErrno
from ...flags import O_ACCMODE, O_PATH, O_RDWR, O_WRONLY
from ...iovec import gather, import_iovec, read_into
from ..kinds import K
from ..registry import syscall
from .fileio import positional, sys_readv, sys_writev

RWF_SUPPORTED = 0xFF          # HIPRI, DSYNC, SYNC, NOWAIT, APPEND, NOAPPEND, ATOMIC, DONTCACHE
ARGS = (("fd", K.FD), ("iov", K.IOVEC_OUT), ("iovcnt", K.INT), ("pos_l", K.ULONG),
        ("pos_h", K.ULONG))
WARGS = (("fd", K.FD), ("iov", K.IOVEC_IN), ("iovcnt", K.INT), ("pos_l", K.ULONG),
         ("pos_h", K.ULONG))


def _position(ctx, low: int, high: int) -> int:
    pos = low | high << 32 if ctx.abi == "i386" else low
    pos &= (1 << 64) - 1
    return pos - (1 << 64) if pos >> 63 else pos


def _file(ctx, fd: int, write: bool):
    f = positional(ctx, fd)                   # ESPIPE before the access mode
    mode = f.flags & O_ACCMODE
    if f.flags & O_PATH or (mode not in (O_WRONLY, O_RDWR) if write else mode == O_WRONLY):
        raise GuestErrno(E.EBADF)
    return f


def preadv(ctx, fd, iov, iovcnt, pos: int) -> int:
    if pos < 0:
        raise GuestErrno(E.EINVAL)
    f = _file(ctx, fd, write=False)
    segments = import_iovec(ctx, iov, iovcnt)
    offset = [pos]

    def read(n: int) -> bytes:
        data = f.pread(n, offset[0])          # ESPIPE for a pipe or a socket
        offset[0] += len(data)
        return data
    return read_into(ctx, segments, read)


def pwritev(ctx, fd, iov, iovcnt, pos: int) -> int:
    if pos < 0:
        raise GuestErrno(E.EINVAL)
    f = _file(ctx, fd, write=True)
    data, faulted = gather(ctx, import_iovec(ctx, iov, iovcnt))
    if not data:
        if faulted:
            raise GuestErrno(E.EFAULT)
        f.pwrite(b"", pos)                    # ESPIPE still applies
        return 0
    return f.pwrite(data, pos)


@syscall("preadv", args=ARGS)
def sys_preadv(ctx, fd, iov, iovcnt, pos_l, pos_h):
    return preadv(ctx, fd, iov, iovcnt, _position(ctx, pos_l, pos_h))


@syscall("pwritev", args=WARGS)
def sys_pwritev(ctx, fd, iov, iovcnt, pos_l, pos_h):
    return pwritev(ctx, fd, iov, iovcnt, _position(ctx, pos_l, pos_h))


def _check_flags(ctx, flags: int) -> None:
    if ctx.int32(flags) & ~RWF_SUPPORTED:
        raise GuestErrno(E.EOPNOTSUPP)


@syscall("preadv2", args=ARGS + (("flags", K.HEX),))
def sys_preadv2(ctx, fd, iov, iovcnt, pos_l, pos_h, flags):
    pos = _position(ctx, pos_l, pos_h)
    _check_flags(ctx, flags)
    if pos == -1:
        return sys_readv(ctx, fd, iov, iovcnt)
    return preadv(ctx, fd, iov, iovcnt, pos)


@syscall("pwritev2", args=WARGS + (("flags", K.HEX),))
def sys_pwritev2(ctx, fd, iov, iovcnt, pos_l, pos_h, flags):
    pos = _position(ctx, pos_l, pos_h)
    _check_flags(ctx, flags)
    if pos == -1:
        return sys_writev(ctx, fd, iov, iovcnt)
    return pwritev(ctx, fd, iov, iovcnt, pos)
