"""F_SETLEASE and F_GETLEASE (fs/locks.c fcntl_setlease, generic_setlease): the model grants no
leases.

Leases are on regular files only (EINVAL), to their owner or CAP_LEASE (EACCES); an unknown
type is EINVAL. A write lease on the rootfs is refused with EAGAIN as Linux's overlayfs refuses
it (check_conflicting_open sees the overlay's own opens of the real file; LTP's fcntl24-26
accept exactly that on overlayfs). A read lease is EAGAIN while the file is open for writing
(as Linux), and also otherwise: breaking a lease (SIGIO to the holder, the opener waiting up to
lease-break-time) is not modeled, so none is granted, and a program sees the answer Linux gives
to a lease that conflicts. F_UNLCK with no lease is EAGAIN (generic_delete_lease), F_GETLEASE
is F_UNLCK.
"""
from ... import errno as E
from ...errno import GuestErrno
from ...flags import O_PATH
from ...fs.constants import S_IFMT, S_IFREG
from ...fs.locks import F_RDLCK, F_UNLCK, F_WRLCK

F_SETLEASE, F_GETLEASE = 1024, 1025
CAP_LEASE = 28


def lease_fcntl(ctx, f, cmd: int, arg: int) -> int:
    if f.flags & O_PATH:
        raise GuestErrno(E.EBADF)
    if cmd == F_GETLEASE:
        return F_UNLCK
    kind = ctx.int32(arg)
    st = f.stat()
    if st.mode & S_IFMT != S_IFREG:
        raise GuestErrno(E.EINVAL)
    creds = ctx.proc.creds
    if creds.fsuid != st.uid and not creds.capable(CAP_LEASE):
        raise GuestErrno(E.EACCES)
    if kind not in (F_RDLCK, F_WRLCK, F_UNLCK):
        raise GuestErrno(E.EINVAL)
    raise GuestErrno(E.EAGAIN)
