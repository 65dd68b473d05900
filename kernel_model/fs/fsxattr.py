"""FS_IOC_FSGETXATTR and FS_IOC_FSSETXATTR's struct fsxattr (include/uapi/linux/fs.h: u32
fsx_xflags, fsx_extsize, fsx_nextents, fsx_projid, fsx_cowextsize, 8 bytes of padding; 28
bytes on both ABIs) over the inode flags the model keeps (inode_flags.py), as fs/file_attr.c
translates them and ext4 and tmpfs answer.

Reading: fileattr_fill_flags maps the FS_*_FL flags that have an XFS twin (sync, immutable,
append, nodump, noatime, dax, projinherit) to FS_XFLAG_*; ext4_fileattr_get hides
PROJINHERIT on a regular file; extent sizes, extents and the project id read 0 (ext4 without
the project feature, tmpfs). Writing (ioctl_fssetxattr, vfs_fileattr_set): a flag outside
FS_XFLAGS_MASK is EOPNOTSUPP (copy_fsxattr_from_user), the read-only prealloc and hasattr are
dropped; the owner (EPERM); the flags the structure cannot say are kept (FS_COMMON_FL);
fileattr_set_prepare: immutable or append changed without CAP_LINUX_IMMUTABLE (EPERM), a new
project id from outside the initial user namespace or -1 (EINVAL), an extent size hint on a
non-regular file or an inherited one on a non-directory (EINVAL), a hint flag with size 0
cleared; then the file system: tmpfs refuses anything beyond the common flags, a size or a
project id (shmem_fileattr_set's fileattr_has_fsx: EOPNOTSUPP), ext4 ignores the XFS-only
ones and refuses a project id after setting the flags (ext4_fileattr_set: setflags, then
setproject's EOPNOTSUPP without the project feature). Measured on Linux 6.18 as root, flag by
flag, on ext4 and tmpfs files and directories.
"""
import struct

from .. import errno as E
from ..creds import CAP_LINUX_IMMUTABLE
from ..errno import GuestErrno
from .constants import S_IFDIR, S_IFREG
from .inode_flags import (EXT4, FS_APPEND_FL, FS_IMMUTABLE_FL, FS_NOATIME_FL, FS_NODUMP_FL,
                          FS_PROJINHERIT_FL, UNCHANGEABLE, get_flags, rules_of, set_flags)

FSXATTR = struct.Struct("<IIIII8x")
FS_SYNC_FL, FS_DAX_FL = 0x8, 0x02000000
# FS_XFLAG_* twins of the FS_*_FL flags (fileattr_fill_flags, fileattr_fill_xflags)
TWINS = ((FS_SYNC_FL, 0x20), (FS_IMMUTABLE_FL, 0x8), (FS_APPEND_FL, 0x10), (FS_NODUMP_FL, 0x80),
         (FS_NOATIME_FL, 0x40), (FS_DAX_FL, 0x8000), (FS_PROJINHERIT_FL, 0x200))
FS_COMMON_FL = sum(fl for fl, _x in TWINS)
FS_XFLAG_COMMON = sum(x for _fl, x in TWINS)
FS_XFLAG_PREALLOC, FS_XFLAG_HASATTR = 0x2, 0x80000000
FS_XFLAG_EXTSIZE, FS_XFLAG_EXTSZINHERIT, FS_XFLAG_COWEXTSIZE = 0x800, 0x1000, 0x10000
FS_XFLAG_PROJINHERIT = 0x200
# include/linux/fileattr.h FS_XFLAGS_MASK of Linux 6.18: every defined bit up to COWEXTSIZE
# (there is no 0x4), and HASATTR
FS_XFLAGS_MASK = 0x1FFFB | FS_XFLAG_HASATTR
FS_XFLAG_RDONLY_MASK = FS_XFLAG_PREALLOC | FS_XFLAG_HASATTR


def xflags_of(flags: int) -> int:
    return sum(x for fl, x in TWINS if flags & fl)


def flags_of(xflags: int) -> int:
    return sum(fl for fl, x in TWINS if xflags & x)


def fsgetxattr(meta) -> bytes:
    """ioctl_fsgetxattr of the inode whose metadata is `meta`."""
    flags = get_flags(meta)
    if rules_of(meta) is EXT4 and meta.fmt == S_IFREG:
        flags &= ~FS_PROJINHERIT_FL                 # ext4_fileattr_get
    return FSXATTR.pack(xflags_of(flags), 0, 0, 0, 0)


def from_user(value: bytes) -> tuple:
    """copy_fsxattr_from_user: (xflags, extsize, projid, cowextsize); fsx_nextents and the
    padding are not read."""
    xflags, extsize, _nextents, projid, cowextsize = FSXATTR.unpack(value)
    return wanted(xflags, extsize, projid, cowextsize, E.EOPNOTSUPP)


def wanted(xflags: int, extsize: int, projid: int, cowextsize: int, unknown: int) -> tuple:
    """What a caller asks for, `unknown` the errno of a flag outside FS_XFLAGS_MASK
    (EOPNOTSUPP for the ioctl, EINVAL for file_setattr's file_attr_to_fileattr)."""
    if xflags & ~FS_XFLAGS_MASK:
        raise GuestErrno(unknown)
    return xflags & ~FS_XFLAG_RDONLY_MASK, extsize, projid, cowextsize


def xflags_now(meta) -> int:
    """The inode's xflags, as vfs_fileattr_get reads them."""
    return FSXATTR.unpack(fsgetxattr(meta))[0]


def fssetxattr(meta, wanted: tuple, creds, initial_ns: bool) -> None:
    """vfs_fileattr_set of from_user's `wanted`; the caller has checked the owner.
    `initial_ns`: the caller is in the initial user namespace (who may change a project id)."""
    xflags, extsize, projid, cowextsize = wanted
    old = get_flags(meta)
    flags = flags_of(xflags) | (old & ~FS_COMMON_FL)
    xflags = _prepared(meta, old, flags, xflags, extsize, projid, cowextsize, creds, initial_ns)
    if rules_of(meta) is not EXT4 and (xflags & ~FS_XFLAG_COMMON or extsize or projid
                                       or cowextsize):
        raise GuestErrno(E.EOPNOTSUPP)              # shmem_fileattr_set: fileattr_has_fsx
    set_flags(meta, flags, creds)
    if projid:
        raise GuestErrno(E.EOPNOTSUPP)              # ext4_ioctl_setproject, after the flags


def _prepared(meta, old: int, flags: int, xflags: int, extsize: int, projid: int,
              cowextsize: int, creds, initial_ns: bool) -> int:
    """fileattr_set_prepare: the refusals every file system shares, and the hint flags that
    a size of 0 turns off."""
    if (flags ^ old) & UNCHANGEABLE and not creds.capable(CAP_LINUX_IMMUTABLE):
        raise GuestErrno(E.EPERM)
    if not initial_ns and (projid or (xflags ^ xflags_of(old)) & FS_XFLAG_PROJINHERIT):
        raise GuestErrno(E.EINVAL)
    if projid == 0xFFFFFFFF:
        raise GuestErrno(E.EINVAL)                  # projid_valid: INVALID_PROJID
    if xflags & FS_XFLAG_EXTSIZE and meta.fmt != S_IFREG \
            or xflags & FS_XFLAG_EXTSZINHERIT and meta.fmt != S_IFDIR:
        raise GuestErrno(E.EINVAL)
    if extsize == 0:
        xflags &= ~(FS_XFLAG_EXTSIZE | FS_XFLAG_EXTSZINHERIT)
    if cowextsize == 0:
        xflags &= ~FS_XFLAG_COWEXTSIZE
    return xflags
