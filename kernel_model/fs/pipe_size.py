"""F_GETPIPE_SZ and F_SETPIPE_SZ: a pipe's capacity (fs/pipe.c pipe_fcntl, pipe_set_size).

The capacity is a whole number of slots of a page each, a power of two of them
(round_pipe_size); past /proc/sys/fs/pipe-max-size only with CAP_SYS_RESOURCE (EPERM), which
the sandbox's root holds over its own pipes unless it dropped it (LTP's root-run pipe12 fills a
pipe of the largest size; fcntl37 drops the capability and expects EPERM). Shrinking below
what the pipe holds is EBUSY (pipe_resize_ring). The pipe's
readers and writers are woken: a writer may now fit.
"""
from .. import errno as E
from ..errno import GuestErrno
from .pipe import PIPE_BUF, Pipe

PAGE_SIZE = 4096
PIPE_MAX_SIZE = 1048576              # /proc/sys/fs/pipe-max-size's default
PIPE_USER_PAGES_SOFT = 16384         # /proc/sys/fs/pipe-user-pages-soft's default (64 MiB)
F_SETPIPE_SZ, F_GETPIPE_SZ = 1031, 1032


def round_pipe_size(size: int) -> int:
    """round_pipe_size(): 0 (invalid) above 2**31, a page at least, else the next power of 2."""
    if size > 1 << 31:
        return 0
    if size < PAGE_SIZE:
        return PAGE_SIZE
    return 1 << (size - 1).bit_length()


def pipe_of(f) -> Pipe:
    """get_pipe_info(): the pipe behind a pipe end or an opened fifo, else EBADF."""
    pipe = getattr(f, "pipe", None)
    if not isinstance(pipe, Pipe):
        raise GuestErrno(E.EBADF)
    return pipe


def set_pipe_size(pipe: Pipe, arg: int, wakeup, privileged: bool = True,
                  max_size: int = PIPE_MAX_SIZE) -> int:
    """pipe_set_size(): the new capacity in bytes, which the call returns; `max_size` is
    /proc/sys/fs/pipe-max-size's value."""
    size = round_pipe_size(arg)
    if size // PAGE_SIZE == 0:
        raise GuestErrno(E.EINVAL)
    if size > pipe.capacity and size > max_size and not privileged:
        raise GuestErrno(E.EPERM)
    if pipe.buffered > size:
        raise GuestErrno(E.EBUSY)
    pipe.capacity = max(size, PIPE_BUF)
    wakeup(pipe)
    return size


def pipe_fcntl(f, cmd: int, arg: int, wakeup, privileged: bool = True,
               max_size: int = PIPE_MAX_SIZE) -> int:
    """`privileged`: the caller holds CAP_SYS_RESOURCE."""
    pipe = pipe_of(f)
    if cmd == F_GETPIPE_SZ:
        return pipe.capacity
    return set_pipe_size(pipe, arg & 0xFFFFFFFF, wakeup, privileged, max_size)
