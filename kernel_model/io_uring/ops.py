"""The requests the model runs (io_uring/opdef.c's prep and issue of each opcode), as the
completion's res: bytes moved, 0, or -errno.

A read or write whose file would sleep (an empty pipe) is not failed: as io_uring arms a poll
and retries it (io_uring/poll.c), it stays pending and is issued again at the next
io_uring_enter, whose wait also sleeps on that file (`Pending`).
"""
from dataclasses import dataclass

from .. import errno as E
from ..blocking import WouldBlock
from ..errno import GuestErrno
from ..flags import O_ACCMODE, O_RDWR, O_WRONLY
from ..fs.unseekable import Unseekable
from ..iovec import MAX_RW_COUNT, gather, import_iovec, read_into
from .abi import (IORING_OP_FSYNC, IORING_OP_NOP, IORING_OP_READ, IORING_OP_READ_FIXED,
                  IORING_OP_READV, IORING_OP_WRITE, IORING_OP_WRITE_FIXED, IORING_OP_WRITEV)

IOSQE_FIXED_FILE = 1
IOSQE_KNOWN = 0x7F                   # FIXED_FILE .. CQE_SKIP_SUCCESS (SQE_VALID_FLAGS)
IORING_FSYNC_DATASYNC = 1
RWF_SUPPORTED = 0xFF
CURRENT_POSITION = (1 << 64) - 1     # off == -1: the file position (IORING_FEAT_RW_CUR_POS)


@dataclass
class Sqe:
    opcode: int
    flags: int
    ioprio: int
    fd: int
    off: int
    addr: int
    len: int
    rw_flags: int
    user_data: int
    buf_index: int


@dataclass
class Pending:
    sqe: Sqe
    file: object                     # whose readiness the retry waits for


def issue(ctx, ring, sqe: Sqe):
    """The request's res, or Pending when its file would sleep."""
    try:
        if sqe.flags & ~IOSQE_KNOWN:
            raise GuestErrno(E.EINVAL)
        if sqe.flags & IOSQE_FIXED_FILE:
            raise GuestErrno(E.EBADF)          # no files are registered in the model
        run = OPERATIONS.get(sqe.opcode)
        if run is None:
            raise GuestErrno(E.EINVAL)         # io_uring_op_init: an opcode not modeled
        return run(ctx, ring, sqe)
    except GuestErrno as err:
        return -err.errno


def _file(ctx, sqe: Sqe, write: bool):
    f = ctx.proc.fds.get_usable(ctx.int32(sqe.fd))
    mode = f.flags & O_ACCMODE
    if (mode not in (O_WRONLY, O_RDWR)) if write else mode == O_WRONLY:
        raise GuestErrno(E.EBADF)              # io_rw_init_file: FMODE_READ / FMODE_WRITE
    if sqe.rw_flags & ~RWF_SUPPORTED:
        raise GuestErrno(E.EOPNOTSUPP)
    return f


def _segments(ctx, ring, sqe: Sqe) -> list[tuple[int, int]]:
    """The buffers: an iovec array (READV, WRITEV), a registered buffer that must hold the
    whole range (the FIXED ones: EFAULT), or one plain buffer (access_ok: EFAULT)."""
    if sqe.opcode in (IORING_OP_READV, IORING_OP_WRITEV):
        return import_iovec(ctx, sqe.addr & ctx.mask, sqe.len)
    if sqe.opcode in (IORING_OP_READ_FIXED, IORING_OP_WRITE_FIXED):
        buffers = ring.buffers or []
        if sqe.buf_index >= len(buffers):
            raise GuestErrno(E.EFAULT)
        base, size = buffers[sqe.buf_index]
        if not base <= sqe.addr or sqe.addr + sqe.len > base + size:
            raise GuestErrno(E.EFAULT)
    length = min(sqe.len, MAX_RW_COUNT)
    if not ctx.access_ok(sqe.addr, length):
        raise GuestErrno(E.EFAULT)
    return [(sqe.addr, length)]


def _read(ctx, ring, sqe: Sqe):
    f = _file(ctx, sqe, write=False)
    segments = _segments(ctx, ring, sqe)
    at = [sqe.off]

    def read(n: int) -> bytes:
        if isinstance(f, Unseekable) or at[0] == CURRENT_POSITION:
            return f.read(n)
        data = f.pread(n, at[0])
        at[0] += len(data)
        return data
    try:
        return read_into(ctx, segments, read)
    except WouldBlock:
        return Pending(sqe, f)


def _write(ctx, ring, sqe: Sqe):
    f = _file(ctx, sqe, write=True)
    data, faulted = gather(ctx, _segments(ctx, ring, sqe))
    if not data and faulted:
        raise GuestErrno(E.EFAULT)
    try:
        if isinstance(f, Unseekable) or sqe.off == CURRENT_POSITION:
            return f.write(data)
        return f.pwrite(data, sqe.off)
    except WouldBlock:
        return Pending(sqe, f)


def _fsync(ctx, ring, sqe: Sqe) -> int:
    """io_fsync_prep: no address, buffer index or priority, and only the DATASYNC flag."""
    if sqe.addr or sqe.ioprio or sqe.buf_index or sqe.rw_flags & ~IORING_FSYNC_DATASYNC:
        raise GuestErrno(E.EINVAL)
    ctx.proc.fds.get_usable(ctx.int32(sqe.fd))
    return 0


OPERATIONS = {
    IORING_OP_NOP: lambda ctx, ring, sqe: 0,
    IORING_OP_READV: _read,
    IORING_OP_WRITEV: _write,
    IORING_OP_FSYNC: _fsync,
    IORING_OP_READ_FIXED: _read,
    IORING_OP_WRITE_FIXED: _write,
    IORING_OP_READ: _read,
    IORING_OP_WRITE: _write,
}
