"""FS_IOC_GETFLAGS and FS_IOC_SETFLAGS (fs/ioctl.c do_vfs_ioctl: ioctl_getflags,
ioctl_setflags), and FS_IOC_FSGETXATTR and FS_IOC_FSSETXATTR (ioctl_fsgetxattr,
ioctl_fssetxattr: the same flags as struct fsxattr, kernel_model/fs/fsxattr.py), answered
before the file's own ioctl as Linux answers them, on the inodes of the writable file systems
(the overlay's and tmpfs's regular files and directories; what they keep is
kernel_model/fs/inode_flags.py). FS_IOC_GETFLAGS's argument is an int on both ABIs although the
request's size says long: i386's requests are its _IOR('f', 1, long) of 4 bytes (the
FS_IOC32_ forms a compat task sends), x86-64's of 8.
"""
import struct

from ...fs.inode_flags import get_flags, is_regular_or_dir, set_flags
from ...fs.overlay import OverlayNode
from ...fs.permission import access_of
from .paths import fs_view

FS_IOC_GETFLAGS = {"x86_64": 0x80086601, "i386": 0x80046601}
FS_IOC_SETFLAGS = {"x86_64": 0x40086602, "i386": 0x40046602}
# _IOR('X', 31, struct fsxattr) and _IOW('X', 32, ...): 28 bytes on both ABIs
FS_IOC_FSGETXATTR, FS_IOC_FSSETXATTR = 0x801C581F, 0x401C5820


def flags_ioctl(ctx, node, request: int, arg: int) -> int | None:
    """The answer to `request` on `node`, or None when it is not one of these two (or the
    inode keeps no flags: the file's own ioctl, or ENOTTY, answers)."""
    if not isinstance(node, OverlayNode) or not is_regular_or_dir(node.meta.mode):
        return None             # procfs, devices, fifos: no fileattr_get here
    meta = node.meta
    if request == FS_IOC_GETFLAGS[ctx.abi]:
        ctx.write(arg, struct.pack("<I", get_flags(meta)))
        return 0
    if request == FS_IOC_SETFLAGS[ctx.abi]:
        access_of(fs_view(ctx)).check_owner(node.stat())      # inode_owner_or_capable
        (wanted,) = struct.unpack("<I", ctx.read(arg, 4))
        set_flags(meta, wanted, ctx.proc.creds)
        meta.ctime_ns = node.ctx.clock()           # shmem/ext4_fileattr_set: a new ctime
        return 0
    if request in (FS_IOC_FSGETXATTR, FS_IOC_FSSETXATTR):
        return _fsxattr_ioctl(ctx, node, request, arg)
    return None


def _fsxattr_ioctl(ctx, node, request: int, arg: int) -> int:
    from ...fs.fsxattr import FSXATTR, from_user, fsgetxattr, fssetxattr    # rarely: not at start-up
    if request == FS_IOC_FSGETXATTR:
        ctx.write(arg, fsgetxattr(node.meta))
        return 0
    wanted = from_user(ctx.read(arg, FSXATTR.size))     # copy_fsxattr_from_user: EFAULT, EOPNOTSUPP
    access_of(fs_view(ctx)).check_owner(node.stat())    # vfs_fileattr_set: inode_owner_or_capable
    fssetxattr(node.meta, wanted, ctx.proc.creds, ctx.proc.creds.user_ns.initial)
    node.meta.ctime_ns = node.ctx.clock()
    return 0
