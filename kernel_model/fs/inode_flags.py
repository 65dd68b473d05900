"""Inode attribute flags (chattr/lsattr, FS_IOC_GETFLAGS/FS_IOC_SETFLAGS) of the writable file
systems, and the refusals the immutable and append-only ones bring.

Which flags a file system keeps: tmpfs's shmem_fileattr_set (mm/shmem.c) takes
SHMEM_FL_USER_MODIFIABLE = immutable, append, nodump and noatime and refuses any other bit with
EOPNOTSUPP; ext4_fileattr_set (fs/ext4/ioctl.c) refuses bits outside EXT4_FL_USER_VISIBLE (and
the directory-only ones on other files, ext4_mask_flags) and ignores the visible ones it does
not let a user change (EXT4_FL_USER_MODIFIABLE); a new file has EXT4_EXTENTS_FL, which a
SETFLAGS without it clears (the file has no blocks to migrate). Both measured on Linux 6.18 as root, bit by bit, on a tmpfs and an
ext4 file. Changing immutable or append-only needs CAP_LINUX_IMMUTABLE
(fs/file_attr.c fileattr_set_prepare), ext4's data journalling CAP_SYS_RESOURCE.

What the flags refuse, with EPERM: writing through inode_permission (IS_IMMUTABLE: opening for
writing, truncate, creating in an immutable directory); opening an append-only file for writing
without O_APPEND, or with O_TRUNC (fs/namei.c may_open); deleting or renaming either kind, or a
name in an append-only directory (may_delete); linking either (vfs_link); chmod, chown and set
times (fs/attr.c notify_change); setting or removing an xattr (fs/xattr.c xattr_permission).
"""
from .. import errno as E
from ..creds import CAP_LINUX_IMMUTABLE, CAP_SYS_RESOURCE
from ..errno import GuestErrno
from .constants import (O_ACCMODE, O_APPEND, O_RDONLY, O_TRUNC, ROOTFS_DEV, S_IFDIR, S_IFMT,
                        S_IFREG)

FS_IMMUTABLE_FL, FS_APPEND_FL, FS_NODUMP_FL, FS_NOATIME_FL = 0x10, 0x20, 0x40, 0x80
FS_JOURNAL_DATA_FL, FS_EXTENTS_FL = 0x4000, 0x80000
FS_DIRSYNC_FL, FS_TOPDIR_FL = 0x10000, 0x20000
FS_PROJINHERIT_FL, FS_CASEFOLD_FL = 0x20000000, 0x40000000
UNCHANGEABLE = FS_IMMUTABLE_FL | FS_APPEND_FL

SHMEM_FL_USER_MODIFIABLE = FS_IMMUTABLE_FL | FS_APPEND_FL | FS_NODUMP_FL | FS_NOATIME_FL
EXT4_FL_USER_VISIBLE, EXT4_FL_USER_MODIFIABLE = 0x725BDFFF, 0x624BC0FF
EXT4_DIR_ONLY = FS_DIRSYNC_FL | FS_TOPDIR_FL | FS_CASEFOLD_FL | FS_PROJINHERIT_FL


class FlagRules:
    """What one file system starts a file with (`initial`: ext4's extents), `visible` the
    bits it accepts without EOPNOTSUPP, `modifiable` those a SETFLAGS changes."""

    def __init__(self, initial: int, visible: int, modifiable: int, dir_only: int = 0):
        self.initial, self.visible = initial, visible
        self.modifiable, self.dir_only = modifiable, dir_only

    def accepted(self, fmt: int) -> int:
        return self.visible if fmt == S_IFDIR else self.visible & ~self.dir_only


SHMEM = FlagRules(0, SHMEM_FL_USER_MODIFIABLE, SHMEM_FL_USER_MODIFIABLE)
EXT4 = FlagRules(FS_EXTENTS_FL, EXT4_FL_USER_VISIBLE, EXT4_FL_USER_MODIFIABLE, EXT4_DIR_ONLY)


def rules_of(meta) -> FlagRules:
    """The rootfs is the reference host's ext4; every other writable mount a tmpfs."""
    return EXT4 if meta.dev == ROOTFS_DEV else SHMEM


def get_flags(meta) -> int:
    """FS_IOC_GETFLAGS of the inode whose metadata is `meta` (None: never set)."""
    return rules_of(meta).initial if meta.iflags is None else meta.iflags


def set_flags(meta, wanted: int, creds) -> None:
    """FS_IOC_SETFLAGS (vfs_fileattr_set): the owner's (EPERM), immutable and append-only
    CAP_LINUX_IMMUTABLE's, then what the file system accepts."""
    rules = rules_of(meta)
    wanted &= 0xFFFFFFFF
    changed = wanted ^ get_flags(meta)
    if changed & UNCHANGEABLE and not creds.capable(CAP_LINUX_IMMUTABLE):
        raise GuestErrno(E.EPERM)
    if wanted & ~rules.accepted(meta.fmt):
        raise GuestErrno(E.EOPNOTSUPP)
    if changed & FS_JOURNAL_DATA_FL & rules.modifiable and not creds.capable(CAP_SYS_RESOURCE):
        raise GuestErrno(E.EPERM)           # ext4_ioctl_setflags: journalling mode
    meta.iflags = (get_flags(meta) & ~rules.modifiable) | (wanted & rules.modifiable)


# --- the refusals ---------------------------------------------------------------------------
def check_open(iflags: int, flags: int) -> None:
    """may_open(): an append-only file is written only at its end, and never truncated."""
    if iflags & FS_APPEND_FL and ((flags & O_ACCMODE) != O_RDONLY and not flags & O_APPEND
                                  or flags & O_TRUNC):
        raise GuestErrno(E.EPERM)


def check_unchangeable(iflags: int, touch: bool = False) -> None:
    """notify_change's, may_delete's, vfs_link's and xattr_permission's check; `touch`: a
    utimes to the current time (ATTR_TOUCH), which only IS_IMMUTABLE refuses."""
    if iflags & (FS_IMMUTABLE_FL if touch else UNCHANGEABLE):
        raise GuestErrno(E.EPERM)


def check_ftruncate(iflags: int) -> None:
    """do_sys_ftruncate: an append-only file is never truncated, even through an fd open for
    appending."""
    if iflags & FS_APPEND_FL:
        raise GuestErrno(E.EPERM)


def check_setfl(f, new: int) -> None:
    """setfl() (fs/fcntl.c): O_APPEND cannot be cleared on an append-only file."""
    node = getattr(f, "node", None)
    if node is not None and f.flags & O_APPEND and not new & O_APPEND and (
            node.stat().iflags & FS_APPEND_FL):
        raise GuestErrno(E.EPERM)


def statx_flags(iflags: int) -> int:
    """STATX_ATTR_IMMUTABLE and STATX_ATTR_APPEND are the FS_ flags' own bits (0x10, 0x20);
    so is STATX_ATTR_NODUMP (0x40), as fs/stat.c generic_fill_statx_attr maps them."""
    return iflags & (FS_IMMUTABLE_FL | FS_APPEND_FL | FS_NODUMP_FL)


def is_regular_or_dir(mode: int) -> bool:
    return mode & S_IFMT in (S_IFREG, S_IFDIR)
