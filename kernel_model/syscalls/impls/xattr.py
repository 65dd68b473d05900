"""Extended attributes: setxattr, getxattr, listxattr, removexattr and their l- and f- forms
(fs/xattr.c), over the inode's store (kernel_model/fs/xattrs.py).

Linux's order: the path (or the fd: EBADF, an O_PATH one too) first, so ENOENT/EBADF come as
usual; then set's flags (EINVAL), the name (unreadable EFAULT; empty or over XATTR_NAME_MAX
ERANGE), the value (E2BIG over XATTR_SIZE_MAX, EFAULT); then the namespace's permission, then
whether the file system keeps attributes at all (EOPNOTSUPP, as /proc and host files answer;
pipes, sockets and eventfds are fs/file_xattrs.py's). get and list with size 0 ask for the
length; a buffer too small is ERANGE. The two POSIX ACL names go to the inode's ACL operations
instead, after the same name and value checks (fs/posix_acl_calls.py).
"""
from ... import errno as E
from ...errno import GuestErrno
from ...flags import O_PATH
from ...creds import CAP_SYS_ADMIN
from ...fs.permission import MAY_READ, MAY_WRITE, access_of
from ...fs.posix_acl import NAMES as ACL_NAMES
from ...fs.posix_acl_calls import get_acl, set_acl
from ...fs.xattrs import (XATTR_CREATE, XATTR_LIST_MAX, XATTR_REPLACE, XATTR_SIZE_MAX,
                          check_permission)
from ..kinds import K
from ..registry import syscall
from .paths import fs_view

XATTR_NAME_MAX = 255


def _name(ctx, addr: int) -> bytes:
    """strncpy_from_user(kname, name, XATTR_NAME_MAX + 1): ERANGE when empty or too long."""
    try:
        text = ctx.read_cstr(addr, XATTR_NAME_MAX)
    except GuestErrno as e:
        raise GuestErrno(E.ERANGE if e.errno == E.ENAMETOOLONG else e.errno) from None
    if not text:
        raise GuestErrno(E.ERANGE)
    return text


def _path_inode(ctx, pathname: int, follow: bool):
    path = ctx.read_path(pathname)
    return ctx.kernel.fs.inode(path, ctx.proc.cwd, fs_view(ctx), follow)


def _fd_inode(ctx, fd: int):
    f = ctx.proc.fds.get(ctx.int32(fd))
    node = getattr(f, "node", None)
    if getattr(f, "flags", 0) & O_PATH:
        raise GuestErrno(E.EBADF)            # fdget() does not take O_PATH files
    if node is None:
        from ...fs.file_xattrs import FileInode         # pipes, sockets, eventfds
        return FileInode(f)
    return node


def _store(ctx, node, name: bytes, mask: int):
    check_permission(access_of(fs_view(ctx)), node.stat(), name, mask)
    if node.xattrs is None:
        raise GuestErrno(E.EOPNOTSUPP)
    return node.xattrs


def _set(ctx, node, name_addr, value, size, flags) -> int:
    if flags & 0xFFFFFFFF & ~(XATTR_CREATE | XATTR_REPLACE):
        raise GuestErrno(E.EINVAL)
    name = _name(ctx, name_addr)
    if size > XATTR_SIZE_MAX:
        raise GuestErrno(E.E2BIG)
    data = ctx.read(value, size)
    if name in ACL_NAMES:
        set_acl(access_of(fs_view(ctx)), node, name, data)
        return 0
    _store(ctx, node, name, MAY_WRITE).set(name, data, flags & 0xFFFFFFFF)
    node.xattrs_changed()
    return 0


def _get(ctx, node, name_addr, value, size) -> int:
    name = _name(ctx, name_addr)
    if name in ACL_NAMES:
        data = get_acl(node, name)
    else:
        data = _store(ctx, node, name, MAY_READ).get(name)
    if size:
        if len(data) > min(size, XATTR_SIZE_MAX):
            raise GuestErrno(E.ERANGE)
        ctx.write(value, data)
    return len(data)


def _list(ctx, node, buf, size) -> int:
    """vfs_listxattr: an inode without a listxattr operation lists nothing (what an LSM
    would add), not EOPNOTSUPP."""
    if node.xattrs is None:
        return 0
    names = node.xattrs.names(privileged=ctx.proc.creds.capable(CAP_SYS_ADMIN))
    if size:
        if len(names) > min(size, XATTR_LIST_MAX):
            raise GuestErrno(E.ERANGE)
        ctx.write(buf, names)
    return len(names)


def _remove(ctx, node, name_addr) -> int:
    name = _name(ctx, name_addr)
    if name in ACL_NAMES:
        set_acl(access_of(fs_view(ctx)), node, name, b"")      # vfs_remove_acl
        return 0
    _store(ctx, node, name, MAY_WRITE).remove(name)
    node.xattrs_changed()
    return 0


SET_ARGS = (("name", K.PATH), ("value", K.XATTR_VALUE_IN), ("size", K.ULONG),
            ("flags", K.XATTR_FLAGS))
GET_ARGS = (("name", K.PATH), ("value", K.XATTR_VALUE_OUT), ("size", K.ULONG))
PATH, FD = (("pathname", K.PATH),), (("fd", K.FD),)


@syscall("setxattr", args=PATH + SET_ARGS)
def sys_setxattr(ctx, pathname, name, value, size, flags):
    return _set(ctx, _path_inode(ctx, pathname, True), name, value, size, flags)


@syscall("lsetxattr", args=PATH + SET_ARGS)
def sys_lsetxattr(ctx, pathname, name, value, size, flags):
    return _set(ctx, _path_inode(ctx, pathname, False), name, value, size, flags)


@syscall("fsetxattr", args=FD + SET_ARGS)
def sys_fsetxattr(ctx, fd, name, value, size, flags):
    return _set(ctx, _fd_inode(ctx, fd), name, value, size, flags)


@syscall("getxattr", args=PATH + GET_ARGS)
def sys_getxattr(ctx, pathname, name, value, size):
    return _get(ctx, _path_inode(ctx, pathname, True), name, value, size)


@syscall("lgetxattr", args=PATH + GET_ARGS)
def sys_lgetxattr(ctx, pathname, name, value, size):
    return _get(ctx, _path_inode(ctx, pathname, False), name, value, size)


@syscall("fgetxattr", args=FD + GET_ARGS)
def sys_fgetxattr(ctx, fd, name, value, size):
    return _get(ctx, _fd_inode(ctx, fd), name, value, size)


@syscall("listxattr", args=PATH + (("list", K.XATTR_LIST_OUT), ("size", K.ULONG)))
def sys_listxattr(ctx, pathname, buf, size):
    return _list(ctx, _path_inode(ctx, pathname, True), buf, size)


@syscall("llistxattr", args=PATH + (("list", K.XATTR_LIST_OUT), ("size", K.ULONG)))
def sys_llistxattr(ctx, pathname, buf, size):
    return _list(ctx, _path_inode(ctx, pathname, False), buf, size)


@syscall("flistxattr", args=FD + (("list", K.XATTR_LIST_OUT), ("size", K.ULONG)))
def sys_flistxattr(ctx, fd, buf, size):
    return _list(ctx, _fd_inode(ctx, fd), buf, size)


@syscall("removexattr", args=PATH + (("name", K.PATH),))
def sys_removexattr(ctx, pathname, name):
    return _remove(ctx, _path_inode(ctx, pathname, True), name)


@syscall("lremovexattr", args=PATH + (("name", K.PATH),))
def sys_lremovexattr(ctx, pathname, name):
    return _remove(ctx, _path_inode(ctx, pathname, False), name)


@syscall("fremovexattr", args=FD + (("name", K.PATH),))
def sys_fremovexattr(ctx, fd, name):
    return _remove(ctx, _fd_inode(ctx, fd), name)
