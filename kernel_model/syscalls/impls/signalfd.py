"""signalfd and signalfd4 over signals/signalfd.py (fs/signalfd.c do_signalfd4): fd -1 makes a new
signalfd, another fd that is one changes its mask; SIGKILL and SIGSTOP are never in a mask."""
import struct

from ... import errno as E
from ...errno import GuestErrno
from ...fs.constants import O_CLOEXEC, O_NONBLOCK
from ...signals.signalfd import SignalFd
from ...signals.delivery import UNBLOCKABLE
from ..kinds import K
from ..registry import syscall

SFD_FLAGS = O_CLOEXEC | O_NONBLOCK
SIGSET_SIZE = 8


@syscall("signalfd", args=(("fd", K.FD), ("mask", K.SIGSET_IN), ("sizemask", K.ULONG)))
def sys_signalfd(ctx, fd, mask_ptr, sizemask):
    return _signalfd4(ctx, fd, mask_ptr, sizemask, 0)


@syscall("signalfd4", args=(("fd", K.FD), ("mask", K.SIGSET_IN), ("sizemask", K.ULONG),
                            ("flags", K.HEX)))
def sys_signalfd4(ctx, fd, mask_ptr, sizemask, flags):
    return _signalfd4(ctx, fd, mask_ptr, sizemask, flags & 0xFFFFFFFF)


def _signalfd4(ctx, fd, mask_ptr, sizemask, flags) -> int:
    if flags & ~SFD_FLAGS or sizemask != SIGSET_SIZE:
        raise GuestErrno(E.EINVAL)
    mask = struct.unpack("<Q", ctx.read(mask_ptr, SIGSET_SIZE))[0] & ~UNBLOCKABLE
    fd = ctx.int32(fd)
    if fd == -1:
        f = SignalFd(ctx.kernel, ctx.proc, mask, nonblocking=bool(flags & O_NONBLOCK))
        return ctx.proc.fds.install(f, at=ctx.proc.fds.lowest_free(), cloexec=bool(flags & O_CLOEXEC))
    f = ctx.proc.fds.get(fd)                          # EBADF
    if not isinstance(f, SignalFd):
        raise GuestErrno(E.EINVAL)
    f.mask = mask
    ctx.kernel.wakeup(f.wait_channel)                 # a sleeper may want the new mask's signals
    return fd
