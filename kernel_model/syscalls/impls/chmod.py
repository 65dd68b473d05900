"""chmod, fchmod, fchmodat and fchmodat2 (fs/open.c chmod_common, do_fchmodat): a file's mode
bits, by path or on an open file's inode; who may is permission.py's (the owner or CAP_FOWNER)."""
from ... import errno as E
from ...errno import GuestErrno
from ...flags import AT_EMPTY_PATH, AT_FDCWD, AT_SYMLINK_NOFOLLOW
from ...fs.constants import O_PATH, S_IFLNK, S_IFMT
from ...fs.inode_flags import check_unchangeable
from ...fs.permission import access_of
from ..kinds import K
from ..registry import syscall
from .paths import _path_at, fs_view


@syscall("chmod", args=(("pathname", K.PATH), ("mode", K.MODE)))
def sys_chmod(ctx, pathname, mode):
    path, base = _path_at(ctx, AT_FDCWD & ctx.mask, pathname)
    ctx.kernel.fs.chmod(path, mode & 0o7777, base, fs_view(ctx))
    return 0


@syscall("fchmodat", args=(("dirfd", K.DIRFD), ("pathname", K.PATH), ("mode", K.MODE)))
def sys_fchmodat(ctx, dirfd, pathname, mode):
    path, base = _path_at(ctx, dirfd, pathname)
    ctx.kernel.fs.chmod(path, mode & 0o7777, base, fs_view(ctx))
    return 0


@syscall("fchmodat2", args=(("dirfd", K.DIRFD), ("pathname", K.PATH), ("mode", K.MODE),
                            ("flags", K.AT_FLAGS)))
def sys_fchmodat2(ctx, dirfd, pathname, mode, flags):
    """fchmodat with flags (fs/open.c do_fchmodat, Linux 6.6): AT_SYMLINK_NOFOLLOW asks for a
    symlink's own mode (EOPNOTSUPP), which names the same file as a walk that follows when the
    last component is no symlink; AT_EMPTY_PATH for the file dirfd
    refers to, an O_PATH descriptor too (what the call was added for); any other flag EINVAL."""
    if flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH):
        raise GuestErrno(E.EINVAL)
    if flags & AT_EMPTY_PATH and pathname and ctx.read_cstr(pathname, 4095) == b"":
        return _fchmod(ctx, ctx.proc.fds.get(ctx.int32(dirfd)), mode, path_ok=True)
    path, base = _path_at(ctx, dirfd, pathname)
    if flags & AT_SYMLINK_NOFOLLOW and ctx.kernel.fs.stat(path, base, fs_view(ctx), follow=False) \
            .mode & S_IFMT == S_IFLNK:
        raise GuestErrno(E.EOPNOTSUPP)            # fs/attr.c notify_change: no symlink modes
    ctx.kernel.fs.chmod(path, mode & 0o7777, base, fs_view(ctx))
    return 0


@syscall("fchmod", args=(("fd", K.FD), ("mode", K.MODE)))
def sys_fchmod(ctx, fd, mode):
    """On the open file's inode, not its path: the caller may not be able to walk to it."""
    return _fchmod(ctx, ctx.proc.fds.get(ctx.int32(fd)), mode, path_ok=False)


def _fchmod(ctx, f, mode: int, path_ok: bool) -> int:
    """chmod_common() on an open file's inode; an O_PATH descriptor only by path (`path_ok`:
    fchmodat2's AT_EMPTY_PATH), fchmod refuses it (EBADF: fdget without FMODE_PATH)."""
    node = getattr(f, "node", None)
    if f.flags & O_PATH and not path_ok:
        raise GuestErrno(E.EBADF)
    if node is None:
        return 0                      # a pipe's or socket's inode keeps no mode here
    if node.stat().mode & S_IFMT == S_IFLNK:
        raise GuestErrno(E.EOPNOTSUPP)
    ctx.kernel.fs.check_writable(f, fs_view(ctx))   # mnt_want_write_file: EROFS
    check_unchangeable(node.stat().iflags)          # notify_change: ATTR_MODE
    node.chmod(access_of(fs_view(ctx)).chmod_mode(node.stat(), mode & 0o7777))
    return 0
