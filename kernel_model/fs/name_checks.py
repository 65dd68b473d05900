"""The checks of opening and of name changes, apart from the file system that makes them
(fs/namei.c, fs/open.c, fs/attr.c): what an open asks of an existing inode, may_delete,
do_renameat2's path checks, chown_common on an inode (and check_unchangeable, re-exported
for filesystem.py: notify_change's check of the inode flags, inode_flags.py)."""
from .. import errno as E
from ..errno import GuestErrno
from .constants import (O_ACCMODE, O_DIRECTORY, O_EXCL, O_PATH, O_RDONLY, O_TRUNC, O_WRONLY,
                        S_ISGID, S_ISUID)
from .inode_flags import FS_APPEND_FL, check_open, check_unchangeable
from .namei import LAST_NORM, Resolved
from .node import Node, wants_write
from .permission import MAY_READ, MAY_WRITE, MAY_EXEC, Access


def check_open_existing(node: Node, flags: int, creating: bool) -> None:
    if creating and flags & O_EXCL:
        raise GuestErrno(E.EEXIST)
    if node.is_symlink and not flags & O_PATH:
        raise GuestErrno(E.ELOOP)           # O_NOFOLLOW on a symlink
    if flags & O_DIRECTORY and not node.is_dir:
        raise GuestErrno(E.ENOTDIR)
    if node.is_dir and not flags & O_PATH and (creating or wants_write(flags)):
        raise GuestErrno(E.EISDIR)
    check_open(node.stat().iflags, flags)


def may_delete(access: Access, r: Resolved) -> None:
    """may_delete(): write and search on the directory (EACCES), then its sticky bit (EPERM)."""
    parent = r.parent.stat()
    access.check(parent, MAY_WRITE | MAY_EXEC)
    if parent.iflags & FS_APPEND_FL:
        raise GuestErrno(E.EPERM)           # names are only ever added to it
    access.check_sticky(parent, r.node.stat())
    check_unchangeable(r.node.stat().iflags)


def open_mask(flags: int) -> int:
    """build_open_flags(): what opening asks of the inode (O_TRUNC asks to write)."""
    mask = {O_RDONLY: MAY_READ, O_WRONLY: MAY_WRITE}.get(flags & O_ACCMODE, MAY_READ | MAY_WRITE)
    return mask | MAY_WRITE if flags & O_TRUNC else mask


def chown_node(node: Node, uid: int, gid: int, access: Access) -> None:
    """chown_common() on an inode: who may (permission.py), then the new ids; a file that is
    not a directory loses S_ISUID, and S_ISGID with a group x bit (ATTR_KILL_SUID/SGID)."""
    st = node.stat()
    check_unchangeable(st.iflags)           # notify_change: ATTR_UID/ATTR_GID
    access.check_chown(st, uid, gid)
    node.chown(uid, gid)
    if not node.is_dir and not node.is_symlink:
        mode = st.mode & 0o7777 & ~S_ISUID
        if mode & 0o010:
            mode &= ~S_ISGID
        if mode != st.mode & 0o7777:
            node.chmod(mode)


def check_rename(src: Resolved, dst: Resolved) -> None:
    """The path checks of do_renameat2(), in Linux's order."""
    if src.parent.mount != dst.parent.mount:
        raise GuestErrno(E.EXDEV)
    if src.last != LAST_NORM or dst.last != LAST_NORM:
        raise GuestErrno(E.EBUSY)
    if src.node is None:
        raise GuestErrno(E.ENOENT)
    if not src.node.is_dir and (src.trailing_slash or dst.trailing_slash):
        raise GuestErrno(E.ENOTDIR)
    old, new = src.components, dst.components
    if len(new) > len(old) and new[:len(old)] == old:
        raise GuestErrno(E.EINVAL)      # moving a directory into itself
    if len(old) > len(new) and old[:len(new)] == new:
        raise GuestErrno(E.ENOTEMPTY)   # the target is an ancestor of the source


def check_new_name(r) -> None:
    """filename_create(): the name must be new and not end in a slash."""
    if r.last != LAST_NORM or r.node is not None:
        raise GuestErrno(E.EEXIST)
    if r.trailing_slash:
        raise GuestErrno(E.ENOENT)
