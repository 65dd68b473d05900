"""vmsplice(2) (fs/splice.c): user memory into a pipe, or a pipe's bytes into user memory.

The model has no page references to give a pipe, so the bytes are copied, which is what a
reader sees either way: into the write end as writev would (EAGAIN when it is full under
SPLICE_F_NONBLOCK or O_NONBLOCK, else the caller sleeps), out of the read end as readv. Only a
pipe will do (EBADF), and only the four SPLICE_F flags (EINVAL).
"""
from ... import errno as E
from ...errno import GuestErrno
from ...flags import O_ACCMODE, O_NONBLOCK, O_RDONLY
from ...fs.pipe_size import pipe_of
from ...iovec import gather, import_iovec, read_into
from ..kinds import K
from ..registry import syscall

SPLICE_F_MOVE, SPLICE_F_NONBLOCK, SPLICE_F_MORE, SPLICE_F_GIFT = 1, 2, 4, 8
SPLICE_F_ALL = SPLICE_F_MOVE | SPLICE_F_NONBLOCK | SPLICE_F_MORE | SPLICE_F_GIFT


@syscall("vmsplice", args=(("fd", K.FD), ("iov", K.IOVEC_IN), ("nr_segs", K.ULONG),
                           ("flags", K.HEX)))
def sys_vmsplice(ctx, fd, iov, nr_segs, flags):
    if flags & ~SPLICE_F_ALL:
        raise GuestErrno(E.EINVAL)
    f = ctx.proc.fds.get(ctx.int32(fd))
    pipe = pipe_of(f)
    nonblocking = bool(flags & SPLICE_F_NONBLOCK or f.flags & O_NONBLOCK)
    segments = import_iovec(ctx, iov, nr_segs)
    if f.flags & O_ACCMODE == O_RDONLY:
        return read_into(ctx, segments, lambda n: pipe.read(n, nonblocking))
    data, faulted = gather(ctx, segments)
    if not data:
        if faulted:
            raise GuestErrno(E.EFAULT)
        return 0
    return pipe.write(data, nonblocking)
