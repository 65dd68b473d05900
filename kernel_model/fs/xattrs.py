"""Extended attributes of the in-memory inodes (the overlay's and /dev/shm's), as tmpfs keeps
them (mm/shmem.c's handlers over fs/xattr.c's simple_xattr list).

The names live in namespaces by prefix: "security.", "trusted." and "user." are stored;
"system." names are POSIX ACLs, which the model does not keep, and any other prefix has no
handler: EOPNOTSUPP (xattr_resolve_name), and so is a prefix with nothing after it (EINVAL).
Who may do what is fs/xattr.c xattr_permission: security.* is the LSM's (the model has none:
anybody); trusted.* needs CAP_SYS_ADMIN (EPERM to write, ENODATA to read); user.* exists on
regular files and directories only (EPERM / ENODATA), a sticky directory's only for its owner,
and otherwise follows the inode's permission bits; listxattr shows trusted.* names to
CAP_SYS_ADMIN only. Inodes without a store (/proc, host files written in place) answer
EOPNOTSUPP, as a file system without handlers does.
"""
from .. import errno as E
from ..creds import CAP_SYS_ADMIN
from ..errno import GuestErrno
from .constants import S_IFDIR, S_IFMT, S_IFREG, S_ISVTX
from .inode_flags import check_unchangeable
from .permission import MAY_READ, MAY_WRITE, Access
from .records import StatResult

XATTR_CREATE, XATTR_REPLACE = 1, 2
XATTR_SIZE_MAX = 65536
XATTR_LIST_MAX = 65536
STORED = (b"security.", b"trusted.", b"user.")


def check_permission(access: Access, st: StatResult, name: bytes, mask: int) -> None:
    """xattr_permission(): EPERM/ENODATA by namespace, then the inode's permission."""
    write = bool(mask & MAY_WRITE)
    if write:
        check_unchangeable(st.iflags)       # first of all: IS_IMMUTABLE || IS_APPEND
    if name.startswith((b"security.", b"system.")):
        return
    if name.startswith(b"trusted."):
        if not access.creds.capable(CAP_SYS_ADMIN):
            raise GuestErrno(E.EPERM if write else E.ENODATA)
        return
    if name.startswith(b"user."):
        kind = st.mode & S_IFMT
        if kind not in (S_IFREG, S_IFDIR):
            raise GuestErrno(E.EPERM if write else E.ENODATA)
        if kind == S_IFDIR and st.mode & S_ISVTX and write and not access.owns(st):
            raise GuestErrno(E.EPERM)
    access.check(st, mask)


def _handled(name: bytes) -> None:
    """xattr_resolve_name(): a stored namespace with a name after its prefix."""
    prefix = next((p for p in STORED if name.startswith(p)), None)
    if prefix is None:
        raise GuestErrno(E.EOPNOTSUPP)
    if len(name) == len(prefix):
        raise GuestErrno(E.EINVAL)


class Xattrs:
    """One inode's attributes, in the order they were first set (simple_xattr_list's)."""

    def __init__(self):
        self._values: dict[bytes, bytes] = {}

    def set(self, name: bytes, value: bytes, flags: int) -> None:
        _handled(name)
        exists = name in self._values
        if flags & XATTR_CREATE and exists:
            raise GuestErrno(E.EEXIST)
        if flags & XATTR_REPLACE and not exists:
            raise GuestErrno(E.ENODATA)
        self._values[name] = bytes(value)

    def get(self, name: bytes) -> bytes:
        _handled(name)
        value = self._values.get(name)
        if value is None:
            raise GuestErrno(E.ENODATA)
        return value

    def remove(self, name: bytes) -> None:
        _handled(name)
        if self._values.pop(name, None) is None:
            raise GuestErrno(E.ENODATA)

    def names(self, privileged: bool) -> bytes:
        """listxattr's buffer: each name NUL-terminated; trusted.* for CAP_SYS_ADMIN only."""
        return b"".join(name + b"\0" for name in self._values
                        if privileged or not name.startswith(b"trusted."))
