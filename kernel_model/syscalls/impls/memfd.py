"""memfd_create(2) and the seal commands of fcntl (mm/memfd.c; the files: fs/memfd.py).

The name (at most 249 bytes: NAME_MAX less "memfd:") only labels the file. MFD_CLOEXEC and
MFD_ALLOW_SEALING are modeled, MFD_NOEXEC_SEAL/MFD_EXEC accepted (the model does not exec a
memfd differently); MFD_HUGETLB is EINVAL, as on a kernel without hugetlbfs, and so is any
other bit.
"""
from ... import errno as E
from ...errno import GuestErrno
from ...flags import O_ACCMODE, O_RDWR, O_WRONLY
from ...fs.memfd import F_SEAL_EXEC, MemFile
from ..kinds import K
from ..registry import syscall

MFD_CLOEXEC, MFD_ALLOW_SEALING, MFD_HUGETLB, MFD_NOEXEC_SEAL, MFD_EXEC = 1, 2, 4, 8, 0x10
MFD_NAME_MAX_LEN = 255 - len("memfd:")
F_ADD_SEALS, F_GET_SEALS = 1033, 1034


@syscall("memfd_create", args=(("name", K.PATH), ("flags", K.HEX)))
def sys_memfd_create(ctx, name, flags):
    flags &= 0xFFFFFFFF
    if flags & ~(MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_NOEXEC_SEAL | MFD_EXEC):
        raise GuestErrno(E.EINVAL)
    if flags & MFD_NOEXEC_SEAL and flags & MFD_EXEC:
        raise GuestErrno(E.EINVAL)
    text = ctx.read_cstr(name, 4096)
    if len(text) > MFD_NAME_MAX_LEN:
        raise GuestErrno(E.EINVAL)
    sealing = bool(flags & (MFD_ALLOW_SEALING | MFD_NOEXEC_SEAL))
    f = ctx.kernel.fs.memfd(text, sealing)
    if flags & MFD_NOEXEC_SEAL:
        f.node.seals |= F_SEAL_EXEC
    return ctx.proc.fds.install(f, cloexec=bool(flags & MFD_CLOEXEC))


def seal_fcntl(f, cmd: int, arg: int) -> int:
    """F_GET_SEALS / F_ADD_SEALS: EINVAL on a file that cannot be sealed."""
    node = getattr(f, "node", None)
    if not isinstance(node, MemFile):
        raise GuestErrno(E.EINVAL)
    if cmd == F_GET_SEALS:
        return node.seals
    node.add_seals(arg & 0xFFFFFFFF, f.flags & O_ACCMODE in (O_WRONLY, O_RDWR))
    return 0

