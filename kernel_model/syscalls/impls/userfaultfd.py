"""userfaultfd(2) (fs/userfaultfd.c new_userfaultfd): a new userfaultfd of the caller's address
space at the lowest free fd; /dev/userfaultfd's USERFAULTFD_IOC_NEW makes one the same way.
The file and its ioctls are kernel_model/userfaultfd/."""
from ... import errno as E
from ...errno import GuestErrno
from ...fs.constants import O_CLOEXEC, O_NONBLOCK
from ...userfaultfd.abi import UFFD_USER_MODE_ONLY
from ...userfaultfd.context import UserfaultCtx
from ..kinds import K
from ..registry import syscall

CAP_SYS_PTRACE = 19


@syscall("userfaultfd", args=(("flags", K.HEX),))
def sys_userfaultfd(ctx, flags):
    """userfaultfd_syscall_allowed: with vm.unprivileged_userfaultfd at its default (0), a
    caller without CAP_SYS_PTRACE may only ask for user-mode faults (EPERM)."""
    flags = ctx.int32(flags)
    if not flags & UFFD_USER_MODE_ONLY and not ctx.proc.creds.capable(CAP_SYS_PTRACE):
        raise GuestErrno(E.EPERM)
    return new_userfaultfd(ctx, flags)


def device_ioctl(ctx, request: int, arg: int) -> int:
    """/dev/userfaultfd's ioctl (fs/devfs.py UserfaultfdDevice): USERFAULTFD_IOC_NEW makes a
    userfaultfd without the syscall's capability check; any other request is EINVAL."""
    from ...userfaultfd.abi import USERFAULTFD_IOC_NEW
    if request != USERFAULTFD_IOC_NEW:
        raise GuestErrno(E.EINVAL)
    return new_userfaultfd(ctx, ctx.int32(arg))


def new_userfaultfd(ctx, flags: int) -> int:
    """Only O_CLOEXEC, O_NONBLOCK and UFFD_USER_MODE_ONLY (EINVAL)."""
    if flags & ~(O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY):
        raise GuestErrno(E.EINVAL)
    fd = ctx.proc.fds.lowest_free()
    uffd = UserfaultCtx(ctx.kernel, ctx.space, nonblocking=bool(flags & O_NONBLOCK))
    return ctx.proc.fds.install(uffd, at=fd, cloexec=bool(flags & O_CLOEXEC))
