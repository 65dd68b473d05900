"""pipe and pipe2: a new Pipe, its read end at pipefd[0] and its write end at pipefd[1]."""
import struct

from ... import errno as E
from ...errno import GuestErrno
from ...fs.constants import O_CLOEXEC, O_DIRECT, O_NONBLOCK
from ...fs.pipe import Pipe
from ..kinds import K
from ..registry import syscall

PIPE2_FLAGS = O_CLOEXEC | O_NONBLOCK | O_DIRECT      # O_DIRECT: packet mode (fs/pipe.py)


@syscall("pipe", args=(("pipefd", K.PIPEFD_OUT),))
def sys_pipe(ctx, pipefd):
    return _make_pipe(ctx, pipefd, 0)


@syscall("pipe2", args=(("pipefd", K.PIPEFD_OUT), ("flags", K.PIPE_FLAGS)))
def sys_pipe2(ctx, pipefd, flags):
    flags &= 0xFFFFFFFF
    if flags & ~PIPE2_FLAGS:
        raise GuestErrno(E.EINVAL)
    return _make_pipe(ctx, pipefd, flags)


def _make_pipe(ctx, pipefd: int, flags: int) -> int:
    # Check the output array before creating anything, as do_pipe2() copies out before it
    # installs the fds: a bad pointer must not leave two fds behind.
    if not ctx.writable(pipefd, 8):
        raise GuestErrno(E.EFAULT)
    fds = ctx.proc.fds
    rfd = fds.lowest_free()              # both fds or neither: EMFILE before anything exists
    wfd = fds.lowest_free(rfd + 1)
    pipe = Pipe(ctx.kernel.wakeup, ctx.kernel.next_pipe_ino())
    reader, writer = pipe.read_end(), pipe.write_end()
    reader.flags |= flags & (O_NONBLOCK | O_DIRECT)
    writer.flags |= flags & (O_NONBLOCK | O_DIRECT)
    cloexec = bool(flags & O_CLOEXEC)
    fds.install(reader, cloexec=cloexec, at=rfd)
    fds.install(writer, cloexec=cloexec, at=wfd)
    ctx.write(pipefd, struct.pack("<ii", rfd, wfd))
    return 0
