"""Extended attributes: the sandbox's file systems have none (fs/xattr.c on a file system
without xattr handlers).

Linux resolves the path (or the fd) first, so ENOENT/EBADF/EFAULT come as usual; then a file
system that registers no xattr handler answers EOPNOTSUPP to every get, set, list and remove.
That is what userland expects from such a file system: `ls -l` and `cp -a` take EOPNOTSUPP
(ENOTSUP) as "no ACL, no security label" and print nothing. Names are still checked first as
Linux's xattr_resolve_name/strncpy_from_user do: an unreadable name is EFAULT, an empty or
over-long one (XATTR_NAME_MAX 255) ERANGE.
"""
from ... import errno as E
from ...errno import GuestErrno
from ...flags import AT_SYMLINK_NOFOLLOW
from ..registry import syscall
from .stat import CWD, stat_path

XATTR_NAME_MAX = 255


def _check_name(ctx, name: int) -> None:
    text = ctx.read_cstr(name, XATTR_NAME_MAX + 1)
    if not text or len(text) > XATTR_NAME_MAX:
        raise GuestErrno(E.ERANGE)


def _on_path(ctx, pathname: int, follow: bool) -> None:
    stat_path(ctx, CWD, pathname, 0 if follow else AT_SYMLINK_NOFOLLOW)


def _on_fd(ctx, fd: int) -> None:
    ctx.proc.fds.get(ctx.int32(fd))


def _unsupported() -> int:
    raise GuestErrno(E.EOPNOTSUPP)


@syscall("getxattr", "setxattr", "removexattr")
def sys_path_xattr(ctx, pathname, name, *_rest):
    _on_path(ctx, pathname, follow=True)
    _check_name(ctx, name)
    return _unsupported()


@syscall("lgetxattr", "lsetxattr", "lremovexattr")
def sys_lpath_xattr(ctx, pathname, name, *_rest):
    _on_path(ctx, pathname, follow=False)
    _check_name(ctx, name)
    return _unsupported()


@syscall("fgetxattr", "fsetxattr", "fremovexattr")
def sys_fd_xattr(ctx, fd, name, *_rest):
    _on_fd(ctx, fd)
    _check_name(ctx, name)
    return _unsupported()


@syscall("listxattr")
def sys_listxattr(ctx, pathname, _list, _size):
    _on_path(ctx, pathname, follow=True)
    return _unsupported()


@syscall("llistxattr")
def sys_llistxattr(ctx, pathname, _list, _size):
    _on_path(ctx, pathname, follow=False)
    return _unsupported()


@syscall("flistxattr")
def sys_flistxattr(ctx, fd, _list, _size):
    _on_fd(ctx, fd)
    return _unsupported()
