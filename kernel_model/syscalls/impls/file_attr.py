"""file_getattr and file_setattr (fs/file_attr.c, Linux 6.17): a file's FS_IOC_FSGETXATTR
attributes by path, as struct file_attr { u64 fa_xflags; u32 fa_extsize, fa_nextents,
fa_projid, fa_cowextsize; } (24 bytes, FILE_ATTR_SIZE_VER0), the same on both ABIs.

The attributes are the inode flags the model keeps, as the ioctls show and take them
(kernel_model/fs/fsxattr.py; extent sizes and project ids read 0), on the inodes with a
fileattr_get: the writable file systems' regular files and directories. Any other inode
(procfs, devices, fifos, symlinks) answers EOPNOTSUPP (vfs_fileattr_get's -ENOIOCTLCMD, which
both calls turn into EOPNOTSUPP). The checks are Linux's, in its order: the flags (EINVAL), the
size (E2BIG over a page, EINVAL under VER0), for setting the value (E2BIG for a non-zero tail
past VER0, EINVAL for an xflag outside FS_XFLAGS_MASK), then the walk (dirfd not a directory
for a relative name: ENOTDIR; AT_EMPTY_PATH with an empty name: dirfd's own file), then
vfs_fileattr_set's owner check (EPERM) and the rest of fileattr_set_prepare's and the file
system's answers.
"""
import struct

from ... import errno as E
from ...errno import GuestErrno
from ...flags import AT_EMPTY_PATH, AT_SYMLINK_NOFOLLOW
from ...fs.inode_flags import is_regular_or_dir
from ...fs.overlay import OverlayNode
from ...fs.permission import access_of
from ..kinds import K
from ..registry import syscall
from .paths import base_dir, fs_view

FILE_ATTR_SIZE_VER0 = 24
FILE_ATTR = struct.Struct("<QIIII")
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


def _file_node(ctx, dirfd, pathname, at_flags):
    """The inode the call names (filename_lookup, or dirfd's file), if it has a
    fileattr_get; EOPNOTSUPP otherwise."""
    name = ctx.read_cstr(pathname, 4095) if pathname else b""
    if not name and at_flags & AT_EMPTY_PATH:
        node = getattr(ctx.proc.fds.get(ctx.int32(dirfd)), "node", None)   # dirfd itself
    else:
        path = ctx.read_path(pathname)
        node = ctx.kernel.fs.inode(path, base_dir(ctx, dirfd, path), fs_view(ctx),
                                   follow=not at_flags & AT_SYMLINK_NOFOLLOW)
    if not isinstance(node, OverlayNode) or not is_regular_or_dir(node.meta.mode):
        raise GuestErrno(E.EOPNOTSUPP)
    return node


@syscall("file_getattr", args=ATTR_ARGS)
def sys_file_getattr(ctx, dirfd, pathname, ufattr, usize, at_flags):
    from ...fs.fsxattr import xflags_now            # rarely asked: not at start-up
    usize = _checked_size(ctx, usize, at_flags)
    node = _file_node(ctx, dirfd, pathname, at_flags)
    attrs = FILE_ATTR.pack(xflags_now(node.meta), 0, 0, 0, 0)
    ctx.write(ufattr, attrs.ljust(usize, b"\0"))     # copy_struct_to_user: zeros past them
    return 0


@syscall("file_setattr", args=ATTR_ARGS)
def sys_file_setattr(ctx, dirfd, pathname, ufattr, usize, at_flags):
    from ...fs.fsxattr import fssetxattr, wanted
    usize = _checked_size(ctx, usize, at_flags)
    value = ctx.read(ufattr, usize)
    if any(value[FILE_ATTR_SIZE_VER0:]):
        raise GuestErrno(E.E2BIG)                  # copy_struct_from_user: unknown tail not zero
    xflags, extsize, _nextents, projid, cowextsize = FILE_ATTR.unpack_from(value)
    asked = wanted(xflags, extsize, projid, cowextsize, E.EINVAL)   # file_attr_to_fileattr
    node = _file_node(ctx, dirfd, pathname, at_flags)
    access_of(fs_view(ctx)).check_owner(node.stat())
    fssetxattr(node.meta, asked, ctx.proc.creds, ctx.proc.creds.user_ns.initial)
    node.meta.ctime_ns = node.ctx.clock()
    return 0
