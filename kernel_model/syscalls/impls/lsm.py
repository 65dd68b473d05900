"""lsm_list_modules (security/lsm_syscalls.c): the LSMs the modeled kernel has, as the ids of
include/uapi/linux/lsm.h: the capability module and Landlock, in their boot order."""
import struct

from ... import errno as E
from ...errno import GuestErrno
from ..kinds import K
from ..registry import syscall

LSM_ID_CAPABILITY = 100
LSM_ID_LANDLOCK = 110
ACTIVE_LSMS = (LSM_ID_CAPABILITY, LSM_ID_LANDLOCK)


@syscall("lsm_list_modules", args=(("ids", K.PTR), ("size", K.PTR), ("flags", K.HEX)))
def sys_lsm_list_modules(ctx, ids, size, flags):
    """flags (EINVAL), the size read (EFAULT) and the needed size written back (EFAULT), then
    E2BIG when it is short, then the ids (EFAULT)."""
    if flags & 0xFFFFFFFF:
        raise GuestErrno(E.EINVAL)
    given = struct.unpack("<I", ctx.read(size, 4))[0]
    total = 8 * len(ACTIVE_LSMS)
    ctx.write(size, struct.pack("<I", total))
    if given < total:
        raise GuestErrno(E.E2BIG)
    ctx.write(ids, struct.pack(f"<{len(ACTIVE_LSMS)}Q", *ACTIVE_LSMS))
    return len(ACTIVE_LSMS)
