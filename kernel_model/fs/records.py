"""The values the file system hands out: stat results, directory entries, mutable metadata."""
from dataclasses import dataclass
from functools import partial

from .constants import PROC_DEV, S_IFDIR, S_IFMT, BLOCK_SIZE, DIR_SIZE, blocks_for

PROC_BLOCK_SIZE = 1024


@dataclass(frozen=True)
class StatResult:
    dev: int
    ino: int
    mode: int
    nlink: int
    uid: int
    gid: int
    rdev: int
    size: int
    blksize: int
    blocks: int
    atime_ns: int
    mtime_ns: int
    ctime_ns: int
    btime_ns: int | None = None       # birth time; None where the file system keeps none (statx)
    iflags: int = 0                   # inode attribute flags (inode_flags.py): FS_IMMUTABLE_FL...
    acl = None      # not a field: AclStat's, for the few inodes with an access ACL


@dataclass(frozen=True)
class AclStat(StatResult):
    """The stat of an inode with an access ACL (posix_acl.py's entries), which the permission
    check reads (permission.py). A subclass so that no other stat pays for the field."""
    acl: tuple | None = None


@dataclass(frozen=True)
class DirEntry:
    ino: int
    name: bytes
    dtype: int


@dataclass
class Meta:
    """Mutable metadata of an in-memory inode (overlay files, devices).

    uid/gid: the owner, root's unless a guest process made the inode or chowned it.
    btime_ns: when the inode was made (ext4's i_crtime, tmpfs's), None on procfs (no btime).
    """
    dev: int
    ino: int
    mode: int
    nlink: int
    atime_ns: int
    mtime_ns: int
    ctime_ns: int
    rdev: int = 0
    uid: int = 0
    gid: int = 0
    xattrs: object = None               # xattrs.Xattrs once one is set (overlay.py)
    btime_ns: int | None = None
    iflags: int | None = None           # the flags FS_IOC_SETFLAGS set (inode_flags.py)

    @property
    def fmt(self) -> int:
        return self.mode & S_IFMT

    def chown(self, uid: int, gid: int, now: int) -> None:
        """New owner and group (-1 as 32 bits: unchanged); ctime changes."""
        if uid != 0xFFFFFFFF:
            self.uid = uid
        if gid != 0xFFFFFFFF:
            self.gid = gid
        self.ctime_ns = now

    def touch_modified(self, now: int) -> None:
        """Content changed: Linux updates mtime and ctime together."""
        self.mtime_ns = self.ctime_ns = now

    def to_stat(self, size: int, held: int | None = None) -> StatResult:
        """`held`: bytes of storage the data takes when it is not its size rounded up to
        blocks (a sparse file: only the pages written, as tmpfs counts i_blocks)."""
        if self.dev == PROC_DEV:
            # proc_fill_super: 1 KiB blocks (stdio buffers of /proc files are that size), and
            # no size or blocks for its directories and files
            return StatResult(self.dev, self.ino, self.mode, self.nlink, self.uid, self.gid,
                              self.rdev, size, PROC_BLOCK_SIZE, 0, self.atime_ns, self.mtime_ns,
                              self.ctime_ns, self.btime_ns)
        if self.fmt == S_IFDIR:
            size = DIR_SIZE
        blocks = blocks_for(size) if held is None else held // 512
        acl = self.xattrs.access_acl() if self.xattrs is not None else None
        return (StatResult if acl is None else partial(AclStat, acl=acl))(
            self.dev, self.ino, self.mode, self.nlink, self.uid, self.gid, self.rdev, size,
            BLOCK_SIZE, blocks, self.atime_ns, self.mtime_ns, self.ctime_ns, self.btime_ns,
            self.iflags or 0)


def new_meta(dev: int, ino: int, mode: int, now: int, nlink: int = 1, rdev: int = 0) -> Meta:
    """An inode made `now`: born then too, but on procfs, whose getattr fills no btime."""
    return Meta(dev, ino, mode, nlink, now, now, now, rdev,
                btime_ns=None if dev == PROC_DEV else now)
