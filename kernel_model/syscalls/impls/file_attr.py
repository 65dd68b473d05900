"""file_getattr and file_setattr (fs/file_attr.c, Linux 6.17): a file's FS_IOC_FSGETXATTR
attributes by path, as struct file_attr { u64 fa_xflags; u32 fa_extsize, fa_nextents,
fa_projid, fa_cowextsize; } (24 bytes, FILE_ATTR_SIZE_VER0), the same on both ABIs.

The model's file systems keep no inode flags, extent hints or project ids (as a file system
that has none: every attribute reads 0), so setting anything but zeros is EOPNOTSUPP (what
vfs_fileattr_set answers for flags a file system does not support); zeros are accepted from the
owner (inode_owner_or_capable: EPERM otherwise). The checks are Linux's, in its order: the flags
(EINVAL), the size (E2BIG over a page, EINVAL under VER0), then the walk (dirfd not a directory
for a relative name: ENOTDIR; AT_EMPTY_PATH with an empty name: dirfd's own file).
"""
import struct

from ... import errno as E
from ...errno import GuestErrno
from ...flags import AT_EMPTY_PATH, AT_SYMLINK_NOFOLLOW
from ...fs.permission import access_of
from ..kinds import K
from ..registry import syscall
from .paths import base_dir, fs_view

FILE_ATTR_SIZE_VER0 = 24
PAGE_SIZE = 4096
ATTR_ARGS = (("dirfd", K.DIRFD), ("pathname", K.PATH), ("ufattr", K.PTR), ("usize", K.ULONG),
             ("at_flags", K.AT_FLAGS))


def _checked_size(ctx, usize, at_flags) -> int:
    """The checks both calls make before anything else: the flags, then the size."""
    if at_flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH):
        raise GuestErrno(E.EINVAL)
    usize &= ctx.mask
    if usize > PAGE_SIZE:
        raise GuestErrno(E.E2BIG)
    if usize < FILE_ATTR_SIZE_VER0:
        raise GuestErrno(E.EINVAL)
    return usize


def _file_stat(ctx, dirfd, pathname, at_flags):
    """The stat of the file the call names (filename_lookup, or dirfd's file)."""
    name = ctx.read_cstr(pathname, 4095) if pathname else b""
    if not name and at_flags & AT_EMPTY_PATH:
        return ctx.proc.fds.get(ctx.int32(dirfd)).stat()     # getname_maybe_null: dirfd itself
    path = ctx.read_path(pathname)
    return ctx.kernel.fs.stat(path, base_dir(ctx, dirfd, path), fs_view(ctx),
                              follow=not at_flags & AT_SYMLINK_NOFOLLOW)


@syscall("file_getattr", args=ATTR_ARGS)
def sys_file_getattr(ctx, dirfd, pathname, ufattr, usize, at_flags):
    usize = _checked_size(ctx, usize, at_flags)
    _file_stat(ctx, dirfd, pathname, at_flags)
    ctx.write(ufattr, bytes(usize))       # copy_struct_to_user: the attributes, zeros past them
    return 0


@syscall("file_setattr", args=ATTR_ARGS)
def sys_file_setattr(ctx, dirfd, pathname, ufattr, usize, at_flags):
    usize = _checked_size(ctx, usize, at_flags)
    wanted = ctx.read(ufattr, usize)
    if any(wanted[FILE_ATTR_SIZE_VER0:]):
        raise GuestErrno(E.E2BIG)                  # copy_struct_from_user: unknown tail not zero
    st = _file_stat(ctx, dirfd, pathname, at_flags)
    access_of(fs_view(ctx)).check_owner(st)
    if any(struct.unpack_from("<QIIII", wanted)):
        raise GuestErrno(E.EOPNOTSUPP)
    return 0
