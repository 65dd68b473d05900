"""getxattr, setxattr and removexattr of system.posix_acl_access and system.posix_acl_default:
the VFS answers them through the inode's ACL operations (fs/xattr.c do_getxattr, do_setxattr,
removexattr call do_get_acl, do_set_acl and vfs_remove_acl of fs/posix_acl.c), not through
xattr_permission and a handler.

Reading needs no permission (vfs_get_acl: "the VFS has no restrictions on reading POSIX ACLs");
an inode of a file system without ACLs (no store: /proc, host files written in place) or a
symlink answers EOPNOTSUPP, an inode without one ENODATA. Writing (vfs_set_acl, set_posix_acl)
checks, in this order: the value (posix_acl.py: EINVAL, EOPNOTSUPP), the inode's immutable and
append-only flags (may_write_xattr: EPERM), a symlink (no ->set_acl: EOPNOTSUPP), a default ACL
on a non-directory (EACCES, or nothing to do when removing), the owner (EPERM), the entries'
order (EINVAL). An access ACL sets the mode's rwx bits (posix_acl_update_mode, as ext4_set_acl
and tmpfs's simple_set_acl call it), dropping S_ISGID for a caller outside the file's group
without CAP_FSETID, and is not kept when the mode says all of it. A value of size 0, or a
header alone, removes the ACL, as removexattr does; neither is ENODATA when there is none.
XATTR_CREATE and XATTR_REPLACE do not apply to ACLs (do_set_acl takes no flags).
"""
from .. import errno as E
from ..creds import CAP_FSETID
from ..errno import GuestErrno
from .constants import S_ISGID
from .inode_flags import check_unchangeable
from .permission import Access
from .posix_acl import ACCESS, DEFAULT, check_valid, equiv_mode, from_xattr, to_xattr


def _acl_store(node):
    """IS_POSIXACL and the inode's ACL operations: a store, and not a symlink."""
    if node.xattrs is None or node.is_symlink or not node.xattrs.keeps_acls:
        raise GuestErrno(E.EOPNOTSUPP)
    return node.xattrs


def get_acl(node, name: bytes) -> bytes:
    """do_get_acl: the ACL as its attribute value, ENODATA when the inode has none."""
    entries = _acl_store(node).acl(name)
    if entries is None:
        raise GuestErrno(E.ENODATA)
    return to_xattr(entries)


def set_acl(access: Access, node, name: bytes, value: bytes) -> None:
    """do_set_acl/vfs_remove_acl: `value` empty removes the ACL."""
    entries = from_xattr(value) if value else None
    st = node.stat()
    check_unchangeable(st.iflags)
    store = _acl_store(node)
    if name == DEFAULT and not node.is_dir:
        if entries is not None:
            raise GuestErrno(E.EACCES)
        return
    access.check_owner(st)
    if entries is not None:
        check_valid(entries)
    if name == ACCESS and entries is not None:
        entries = _update_mode(access, node, st, entries)
    store.set_acl(name, entries)
    node.xattrs_changed()


def _update_mode(access: Access, node, st, entries: tuple) -> tuple | None:
    """posix_acl_update_mode: the mode the ACL gives; None when that mode says it all."""
    mode, more = equiv_mode(entries, st.mode)
    if not access.in_group(st.gid) and not access.capable_over(st, CAP_FSETID):
        mode &= ~S_ISGID
    if mode != st.mode:
        node.chmod(mode & 0o7777)
    return entries if more else None
