"""eventfd and eventfd2: a new EventFd (kernel_model/fs/eventfd.py) at the lowest free fd."""
from ... import errno as E
from ...errno import GuestErrno
from ...fs.constants import O_CLOEXEC, O_NONBLOCK
from ...fs.eventfd import EFD_SEMAPHORE, EventFd
from ..kinds import K
from ..registry import syscall

EFD_FLAGS = O_CLOEXEC | O_NONBLOCK | EFD_SEMAPHORE


@syscall("eventfd", args=(("initval", K.UINT),))
def sys_eventfd(ctx, initval):
    return _eventfd(ctx, initval, 0)


@syscall("eventfd2", args=(("initval", K.UINT), ("flags", K.HEX)))
def sys_eventfd2(ctx, initval, flags):
    return _eventfd(ctx, initval, flags & 0xFFFFFFFF)


def _eventfd(ctx, initval: int, flags: int) -> int:
    if flags & ~EFD_FLAGS:
        raise GuestErrno(E.EINVAL)
    fd = ctx.proc.fds.lowest_free()
    f = EventFd(ctx.kernel.wakeup, initval & 0xFFFFFFFF, semaphore=bool(flags & EFD_SEMAPHORE),
                nonblocking=bool(flags & O_NONBLOCK))
    return ctx.proc.fds.install(f, at=fd, cloexec=bool(flags & O_CLOEXEC))
