"""name_to_handle_at and open_by_handle_at (fs/fhandle.c; the handles: fs/fhandle.py).

name_to_handle_at's order: flags other than AT_SYMLINK_FOLLOW and AT_EMPTY_PATH are EINVAL;
the lookup (EBADF, ENOTDIR, EFAULT, ENOENT; a final symlink followed only with
AT_SYMLINK_FOLLOW); the header of struct file_handle {u32 handle_bytes; int handle_type;}
(EFAULT), a size above MAX_HANDLE_SZ EINVAL; a size too small EOVERFLOW with the needed size
and FILEID_INVALID written back; the mount id (statx's) and the handle (EFAULT).
open_by_handle_at's: CAP_DAC_READ_SEARCH (EPERM), the header (EFAULT), a size of 0 or above
MAX_HANDLE_SZ EINVAL, the handle bytes (EFAULT), the mount fd (EBADF; AT_FDCWD is the cwd's),
the inode on that mount (ESTALE), then the open as open(2) checks it (a symlink ELOOP).
"""
import struct

from ... import errno as E
from ...creds import CAP_DAC_READ_SEARCH
from ...errno import GuestErrno
from ...flags import AT_EMPTY_PATH, AT_FDCWD, AT_SYMLINK_FOLLOW, O_CLOEXEC
from ...fs.mountinfo import mount_id_of
from ...fs.fhandle import FILEID_INVALID, HANDLE_BYTES, MAX_HANDLE_SZ
from ..kinds import K
from ..registry import syscall
from .paths import _fd_inode, _path_at, fs_view, global_view



@syscall("name_to_handle_at", args=(("dirfd", K.DIRFD), ("pathname", K.PATH),
                                    ("handle", K.PTR), ("mount_id", K.PTR), ("flags", K.HEX)))
def sys_name_to_handle_at(ctx, dirfd, pathname, handle, mount_id, flags):
    flags = ctx.int32(flags)
    if flags & ~(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH):
        raise GuestErrno(E.EINVAL)
    node, path = _named(ctx, dirfd, pathname, flags)
    size, _ = struct.unpack("<Ii", ctx.read(handle, 8))
    if size > MAX_HANDLE_SZ:
        raise GuestErrno(E.EINVAL)
    kind, raw = ctx.kernel.fs.handles.encode(node, path)
    ctx.write(mount_id, struct.pack("<i", mount_id_of(node.stat().dev)))
    if size < HANDLE_BYTES:
        ctx.write(handle, struct.pack("<Ii", HANDLE_BYTES, FILEID_INVALID))
        raise GuestErrno(E.EOVERFLOW)
    ctx.write(handle, struct.pack("<Ii", HANDLE_BYTES, kind) + raw)
    return 0


def _named(ctx, dirfd, pathname, flags):
    """The inode and a global path of what name_to_handle_at names."""
    if flags & AT_EMPTY_PATH and pathname and ctx.read_cstr(pathname, 4095) == b"":
        node = _fd_inode(ctx, dirfd)
        if node is None:
            raise GuestErrno(E.EOPNOTSUPP)      # pipefs, sockfs: no export operations
        f = ctx.proc.fds.get(ctx.int32(dirfd)) if ctx.int32(dirfd) != AT_FDCWD else None
        return node, f.path if f is not None else ctx.proc.cwd
    path, base = _path_at(ctx, dirfd, pathname)
    fs, view = ctx.kernel.fs, fs_view(ctx)
    follow = bool(flags & AT_SYMLINK_FOLLOW)
    node = fs.inode(path, base, view, follow=follow)
    return node, fs.realpath(path, base, view) if follow else path if path.startswith(b"/") \
        else base.rstrip(b"/") + b"/" + path


@syscall("open_by_handle_at", args=(("mount_fd", K.DIRFD), ("handle", K.PTR),
                                    ("flags", K.OPEN_FLAGS)))
def sys_open_by_handle_at(ctx, mount_fd, handle, flags):
    if not ctx.proc.creds.capable(CAP_DAC_READ_SEARCH):
        raise GuestErrno(E.EPERM)
    size, kind = struct.unpack("<Ii", ctx.read(handle, 8))
    if size == 0 or size > MAX_HANDLE_SZ:
        raise GuestErrno(E.EINVAL)
    raw = ctx.read(handle + 8, size)
    mount = _mount_of(ctx, mount_fd)
    node, path = ctx.kernel.fs.handles.decode(mount, kind, raw)
    f = ctx.kernel.fs.open_inode(node, path, flags & ~O_CLOEXEC, global_view(ctx))
    return ctx.proc.fds.install(f, cloexec=bool(flags & O_CLOEXEC))


def _mount_of(ctx, mount_fd) -> str:
    """get_vfsmount_from_fd(): the mount of the fd's file, the cwd's for AT_FDCWD."""
    if ctx.int32(mount_fd) == AT_FDCWD:
        return ctx.kernel.fs.inode(ctx.proc.cwd, b"/", global_view(ctx)).mount
    node = getattr(ctx.proc.fds.get(ctx.int32(mount_fd)), "node", None)
    return node.mount if node is not None else ""
