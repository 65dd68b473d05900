"""statx's stx_attributes and stx_attributes_mask: which attribute bits a file has, and which
ones its file system can tell at all.

fs/stat.c vfs_getattr_nosec adds, for every file, STATX_ATTR_AUTOMOUNT and STATX_ATTR_DAX to
the mask and STATX_ATTR_MOUNT_ROOT to both when the path is the root of its mount
(path_mounted); each file system's getattr adds the inode flags it supports: ext4_getattr
(fs/ext4/inode.c) compressed, immutable, append, nodump, encrypted and verity; shmem_getattr
(mm/shmem.c, tmpfs and devtmpfs) immutable, append and nodump; procfs and pipefs none. The
rootfs is ext4's (the reference host's), measured with strace -v there. The files of the
writable file systems (overlay and tmpfs) carry the immutable, append and nodump flags
FS_IOC_SETFLAGS set (inode_flags.py).
"""
from .constants import DEVTMPFS_DEV, ROOTFS_DEV
from .inode_flags import statx_flags
from .mountinfo import is_mount_root
from .shmfs import SHM_DEV

STATX_ATTR_COMPRESSED, STATX_ATTR_IMMUTABLE, STATX_ATTR_APPEND = 0x4, 0x10, 0x20
STATX_ATTR_NODUMP, STATX_ATTR_ENCRYPTED, STATX_ATTR_AUTOMOUNT = 0x40, 0x800, 0x1000
STATX_ATTR_MOUNT_ROOT, STATX_ATTR_VERITY, STATX_ATTR_DAX = 0x2000, 0x100000, 0x200000

_EVERY_FILE = STATX_ATTR_AUTOMOUNT | STATX_ATTR_MOUNT_ROOT | STATX_ATTR_DAX
_SHMEM = STATX_ATTR_IMMUTABLE | STATX_ATTR_APPEND | STATX_ATTR_NODUMP
_EXT4 = _SHMEM | STATX_ATTR_COMPRESSED | STATX_ATTR_ENCRYPTED | STATX_ATTR_VERITY
_BY_DEVICE = {ROOTFS_DEV: _EXT4, DEVTMPFS_DEV: _SHMEM, SHM_DEV: _SHMEM}


def statx_attributes(st) -> tuple[int, int]:
    """(stx_attributes, stx_attributes_mask) of the file `st` describes."""
    attributes = STATX_ATTR_MOUNT_ROOT if is_mount_root(st.dev, st.ino) else 0
    attributes |= statx_flags(st.iflags)
    return attributes, _EVERY_FILE | _BY_DEVICE.get(st.dev, 0)
