"""Extended attributes of the in-memory inodes (the overlay's and /dev/shm's), as tmpfs keeps
them (mm/shmem.c's handlers over fs/xattr.c's simple_xattr list).

The names live in namespaces by prefix: "security.", "trusted." and "user." are stored;
system.posix_acl_access and system.posix_acl_default are POSIX ACLs, which the VFS reads and
writes through the inode's ACL operations rather than a handler (posix_acl_calls.py keeps them
here, parsed); any other name has no handler: EOPNOTSUPP (xattr_resolve_name), and so is a
prefix with nothing after it (EINVAL).
Who may do what is fs/xattr.c xattr_permission: security.* is the LSM's (the model has only
the capability hook: CAP_SYS_ADMIN to change one, anybody to read); trusted.* needs CAP_SYS_ADMIN (EPERM to write, ENODATA to read); user.* exists on
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
ACL_ACCESS = b"system.posix_acl_access"        # posix_acl.ACCESS, named here for chmod


def check_permission(access: Access, st: StatResult, name: bytes, mask: int) -> None:
    """xattr_permission(): EPERM/ENODATA by namespace, then the inode's permission."""
    write = bool(mask & MAY_WRITE)
    if write:
        check_unchangeable(st.iflags)       # first of all: IS_IMMUTABLE || IS_APPEND
    if name.startswith(b"security."):
        # security/commoncap.c cap_inode_setxattr/cap_inode_removexattr, the hook that is
        # always there: changing a security.* name takes CAP_SYS_ADMIN (security.capability
        # is cap_convert_nscap's, which the model does not check)
        if write and name != b"security.capability" and not access.creds.capable(CAP_SYS_ADMIN):
            raise GuestErrno(E.EPERM)
        return
    if name.startswith(b"system."):
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
    """One inode's attributes and its POSIX ACLs (the entries of posix_acl.py, by attribute
    name: i_acl and i_default_acl). listxattr's order: tmpfs's simple_xattr_list names the ACLs
    first (posix_acl_listxattr: access, then default), then the others in the order they were
    first set (`acls_first`); ext4 keeps ACLs as attributes among the others, all in the order
    they were first set (measured on Linux 6.18: a default ACL set before the access one is
    listed first on ext4, second on tmpfs)."""

    keeps_acls = True           # IS_POSIXACL (file_xattrs.py's sockets have none)

    def __init__(self, acls_first: bool = True):
        self._values: dict[bytes, bytes] = {}
        self._acls: dict[bytes, tuple] = {}
        self._order: dict[bytes, None] | None = None if acls_first else {}

    def acl(self, name: bytes) -> tuple | None:
        return self._acls.get(name)

    def access_acl(self) -> tuple | None:
        return self._acls.get(ACL_ACCESS)

    def chmod(self, mode: int) -> None:
        """posix_acl_chmod (from the file system's setattr): the access ACL follows the new
        mode's bits. posix_acl.py is imported here, when an inode has an ACL, not at start-up."""
        entries = self._acls.get(ACL_ACCESS)
        if entries is not None:
            from .posix_acl import chmod_entries
            self._acls[ACL_ACCESS] = chmod_entries(entries, mode)

    def set_acl(self, name: bytes, entries: tuple | None) -> None:
        """set_cached_acl: None removes it."""
        if entries is None:
            self._acls.pop(name, None)
        else:
            self._acls[name] = entries
        self._ordered(name, entries is not None)

    def _ordered(self, name: bytes, present: bool) -> None:
        if self._order is not None:
            if present:
                self._order.setdefault(name)
            else:
                self._order.pop(name, None)

    def set(self, name: bytes, value: bytes, flags: int) -> None:
        _handled(name)
        exists = name in self._values
        if flags & XATTR_CREATE and exists:
            raise GuestErrno(E.EEXIST)
        if flags & XATTR_REPLACE and not exists:
            raise GuestErrno(E.ENODATA)
        self._values[name] = bytes(value)
        self._ordered(name, True)

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
        self._ordered(name, False)

    def names(self, privileged: bool) -> bytes:
        """listxattr's buffer: each name NUL-terminated; trusted.* for CAP_SYS_ADMIN only."""
        listed = sorted(self._acls) + list(self._values) if self._order is None else self._order
        return b"".join(name + b"\0" for name in listed
                        if privileged or not name.startswith(b"trusted."))
