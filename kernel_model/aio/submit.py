"""io_submit's one request (fs/aio.c io_submit_one and __io_submit_one), in Linux's order of
checks, and the operations, which complete at once in the model.

A check that fails before the request is made (a bad iocb, fd, buffer or flag) is the
submission's error: io_submit stops there. What the operation itself answers (bytes moved,
or a file's error such as EAGAIN under RWF_NOWAIT) is the completion event's `res`.
"""
from .. import errno as E
from ..blocking import WouldBlock
from ..errno import GuestErrno
from ..flags import O_ACCMODE, O_RDWR, O_WRONLY
from ..fs.eventfd import EventFd
from ..fs.unseekable import Unseekable
from ..readiness import POLLERR, POLLHUP, file_events
from ..file_size_limit import fit_write
from ..iovec import MAX_RW_COUNT, gather, import_iovec, read_into
from .abi import (IOCB, IOCB_CMD_FDSYNC, IOCB_CMD_FSYNC, IOCB_CMD_POLL, IOCB_CMD_PREAD,
                  IOCB_CMD_PREADV, IOCB_CMD_PWRITE, IOCB_CMD_PWRITEV, IOCB_FLAG_RESFD,
                  IOCB_KEY_OFFSET, KIOCB_KEY, Iocb)
from .ring import KioCtx, PendingPoll

RWF_SUPPORTED = 0xFF          # include/uapi/linux/fs.h: HIPRI .. DONTCACHE
RWF_NOWAIT = 0x08


def submit_one(ctx, kioctx: KioCtx, user_iocb: int) -> None:
    """io_submit_one: copy and check the iocb, take a request slot, then submit it."""
    cb = Iocb(ctx.read(user_iocb, IOCB.size))
    if cb.reserved2:
        raise GuestErrno(E.EINVAL)         # "enforce forwards compatibility on users"
    if cb.nbytes >> 63:
        # "prevent overflows": aio_nbytes must be a non-negative ssize_t of the (64-bit)
        # kernel's, for a compat caller too; aio_buf always fits its unsigned long
        raise GuestErrno(E.EINVAL)
    if not kioctx.has_room():
        raise GuestErrno(E.EAGAIN)         # aio_get_req: no slot until events are reaped
    f = ctx.proc.fds.get_usable(cb.fildes)
    eventfd = _resfd(ctx, cb) if cb.flags & IOCB_FLAG_RESFD else None
    ctx.write(user_iocb + IOCB_KEY_OFFSET, KIOCB_KEY.to_bytes(4, "little"))
    operation = OPERATIONS.get(cb.opcode)
    if operation is None:
        raise GuestErrno(E.EINVAL)         # "invalid aio operation"
    res = operation(ctx, f, cb)
    if isinstance(res, PendingPoll):
        res.obj, res.data, res.eventfd = user_iocb, cb.data, eventfd
        kioctx.pending.append(res)
    else:
        kioctx.complete(user_iocb, cb.data, res, eventfd)


def _resfd(ctx, cb: Iocb) -> EventFd:
    """eventfd_ctx_fdget: EBADF for no file, EINVAL for a file that is not an eventfd."""
    f = ctx.proc.fds.get(cb.resfd)
    if not isinstance(f, EventFd):
        raise GuestErrno(E.EINVAL)
    return f


def _prep_rw(cb: Iocb) -> None:
    """aio_prep_rw's kiocb_set_rw_flags: an unknown RWF_* flag is EOPNOTSUPP."""
    if cb.rw_flags & ~RWF_SUPPORTED:
        raise GuestErrno(E.EOPNOTSUPP)


def _segments(ctx, cb: Iocb, vectored: bool) -> list[tuple[int, int]]:
    """aio_setup_rw: an iovec array of aio_nbytes entries, or the one buffer (import_ubuf:
    capped at MAX_RW_COUNT, then access_ok)."""
    if vectored:
        return import_iovec(ctx, cb.buf, cb.nbytes)
    length = min(cb.nbytes, MAX_RW_COUNT)
    if not ctx.access_ok(cb.buf, length):
        raise GuestErrno(E.EFAULT)
    return [(cb.buf, length)]


def _run(cb: Iocb, transfer) -> int:
    """The operation's result as the event's res: bytes moved, or -errno. A file that would
    sleep answers EAGAIN under RWF_NOWAIT; without it the submitter sleeps (Linux's
    read_iter blocks io_submit, a pipe's for one), so WouldBlock goes up to the call."""
    try:
        return transfer()
    except GuestErrno as err:
        return -err.errno
    except WouldBlock:
        if cb.rw_flags & RWF_NOWAIT:
            return -E.EAGAIN
        raise


def _read(ctx, f, cb: Iocb, vectored: bool) -> int:
    """aio_read: FMODE_READ (EBADF), the buffers, rw_verify_area (a negative offset is
    EINVAL), then read_iter at aio_offset; a stream (pipe, socket) has no offset."""
    _prep_rw(cb)
    if f.flags & O_ACCMODE == O_WRONLY:
        raise GuestErrno(E.EBADF)
    segments = _segments(ctx, cb, vectored)
    if cb.offset < 0:
        raise GuestErrno(E.EINVAL)
    position = [cb.offset]

    def read(n: int) -> bytes:
        if isinstance(f, Unseekable):
            return f.read(n)
        data = f.pread(n, position[0])
        position[0] += len(data)
        return data
    return _run(cb, lambda: read_into(ctx, segments, read))


def _write(ctx, f, cb: Iocb, vectored: bool) -> int:
    """aio_write: FMODE_WRITE (EBADF), the buffers, rw_verify_area, then write_iter."""
    _prep_rw(cb)
    if f.flags & O_ACCMODE not in (O_WRONLY, O_RDWR):
        raise GuestErrno(E.EBADF)
    segments = _segments(ctx, cb, vectored)
    if cb.offset < 0:
        raise GuestErrno(E.EINVAL)

    def write() -> int:
        data, faulted = gather(ctx, segments)
        if not data and faulted:
            raise GuestErrno(E.EFAULT)
        if isinstance(f, Unseekable):
            return f.write(data)
        return f.pwrite(fit_write(ctx, f, data, cb.offset), cb.offset)
    return _run(cb, write)


def _fsync(ctx, f, cb: Iocb) -> int:
    """aio_fsync: no buffer, offset, size or flags (EINVAL), and a file with an fsync
    operation: pipes, sockets and terminals have none (EINVAL)."""
    if cb.buf or cb.offset or cb.nbytes or cb.rw_flags or isinstance(f, Unseekable):
        raise GuestErrno(E.EINVAL)
    return 0                               # the model's files are always on stable storage


def _poll(ctx, f, cb: Iocb):
    """aio_poll: events in the low 16 bits only, no offset, size or flags (EINVAL); POLLERR
    and POLLHUP are always wanted. Ready now, it completes with the mask (x86's
    mangle_poll is the identity); else it waits, cancellable."""
    if cb.buf & ~0xFFFF or cb.offset or cb.nbytes or cb.rw_flags:
        raise GuestErrno(E.EINVAL)
    events = cb.buf | POLLERR | POLLHUP
    mask = file_events(f) & events
    return mask if mask else PendingPoll(0, 0, f, events, None)


OPERATIONS = {
    IOCB_CMD_PREAD: lambda ctx, f, cb: _read(ctx, f, cb, False),
    IOCB_CMD_PWRITE: lambda ctx, f, cb: _write(ctx, f, cb, False),
    IOCB_CMD_PREADV: lambda ctx, f, cb: _read(ctx, f, cb, True),
    IOCB_CMD_PWRITEV: lambda ctx, f, cb: _write(ctx, f, cb, True),
    IOCB_CMD_FSYNC: _fsync,
    IOCB_CMD_FDSYNC: _fsync,
    IOCB_CMD_POLL: _poll,
}
