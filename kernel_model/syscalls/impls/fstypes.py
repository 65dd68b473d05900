"""sysfs(2) (fs/filesystems.c): the file system types the kernel has, by index.

Option 1 gives the index of a type name (EINVAL for an unknown one, EFAULT for an unreadable
name), option 2 writes the name of an index (EINVAL past the end), option 3 counts them; any
other option is EINVAL. The modeled kernel's types are those of its mounts (/proc/PID/mounts):
the overlay root, proc, devtmpfs for /dev and tmpfs for /dev/shm, in registration order as
Linux registers them at boot (tmpfs and devtmpfs with the shmem code, proc, then overlay's
module).
"""
from ... import errno as E
from ...errno import GuestErrno
from ..kinds import K
from ..registry import syscall

FILESYSTEMS = (b"tmpfs", b"devtmpfs", b"proc", b"overlay")
FSTYPE_MAX = 255


@syscall("sysfs", args=(("option", K.INT), ("arg1", K.ULONG), ("arg2", K.ULONG)))
def sys_sysfs(ctx, option, arg1, arg2):
    option = ctx.int32(option)
    if option == 1:
        name = ctx.read_cstr(arg1, FSTYPE_MAX)
        if name not in FILESYSTEMS:
            raise GuestErrno(E.EINVAL)
        return FILESYSTEMS.index(name)
    if option == 2:
        index = arg1 & 0xFFFFFFFF
        if index >= len(FILESYSTEMS):
            raise GuestErrno(E.EINVAL)
        ctx.write(arg2, FILESYSTEMS[index] + b"\0")
        return 0
    if option == 3:
        return len(FILESYSTEMS)
    raise GuestErrno(E.EINVAL)
