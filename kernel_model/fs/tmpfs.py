"""The in-memory file systems mount(2) can make inside the sandbox: tmpfs and hugetlbfs
(mm/shmem.c, fs/hugetlbfs/inode.c).

Each mount is a superblock of its own: an empty overlay directory with no lower layer (its
files are memory only, in the run's data budget, as /dev/shm's: shmfs.py), a device number of
its own (an anonymous 0:N, as get_anon_bdev gives) and a mount name of its own, so rename(2)
and link(2) to another mount are EXDEV. Its options, parsed as shmem_parse_one and
hugetlbfs_parse_param parse them:
  tmpfs      size= (bytes with a k/m/g suffix, or N%), nr_inodes=, mode= (octal), uid=, gid=;
  hugetlbfs  pagesize= (2M, the default hstate; another size is EINVAL), size=, mode=, uid=,
             gid=, min_size=, nr_inodes=.
An unknown option is EINVAL, as fs_parse gives it. What statfs reports of a superblock is
`Superblock.statfs_fields` (syscalls/impls/statfs.py asks by st_dev).
"""
from dataclasses import dataclass, field
from typing import Callable

from .. import errno as E
from ..errno import GuestErrno
from .constants import S_IFDIR, makedev
from .databudget import DataBudget
from .inodes import InodeTable
from .mountinfo import FIRST_ANON_MINOR       # below: the fixed ones (/dev, /proc, shm)
from .overlay import OverlayContext, OverlayDir
from .records import Meta, new_meta

TMPFS_MAGIC, HUGETLBFS_MAGIC = 0x01021994, 0x958458F6
HPAGE = 2 << 20
_SUFFIXES = {b"k": 1 << 10, b"m": 1 << 20, b"g": 1 << 30, b"t": 1 << 40, b"p": 1 << 50,
             b"e": 1 << 60}


@dataclass
class TmpfsContext(OverlayContext):
    dev: int = 0
    huge_pages: bool = False       # hugetlbfs: cachestat is EOPNOTSUPP (is_file_hugepages)

    def meta(self, mode: int, nlink: int = 1) -> Meta:
        return new_meta(self.dev, self.table.fresh(), mode, self.clock(), nlink)


@dataclass
class Superblock:
    """One mounted tmpfs or hugetlbfs: its root, type and the options it shows."""
    dev: int
    fstype: bytes
    root: OverlayDir
    options: dict = field(default_factory=dict)   # the options given, as /proc/mounts shows them
    read_only: bool = False                       # SB_RDONLY (MS_RDONLY, a read-only remount)

    @property
    def magic(self) -> int:
        return HUGETLBFS_MAGIC if self.fstype == b"hugetlbfs" else TMPFS_MAGIC

    @property
    def block_size(self) -> int:
        return HPAGE if self.fstype == b"hugetlbfs" else 4096

    def statfs_fields(self, budget: int, name_max: int, flags: int) -> tuple:
        """shmem_statfs / hugetlbfs_statfs: the size given (tmpfs: half the memory budget by
        default, as half of RAM), all of it free (the model does not count a mount's pages);
        hugetlbfs without size= reports no blocks; f_files the nr_inodes given, else none."""
        bsize = self.block_size
        size = size_of(self.options, budget)
        if size is None:
            size = budget // 2 if self.magic == TMPFS_MAGIC else 0
        blocks = size // bsize
        files = _number(self.options.get(b"nr_inodes", b"0"))
        ro = 1 if self.read_only else 0                # ST_RDONLY
        fsid = (self.dev & 0xFFFFFFFF, self.dev >> 32)
        return (self.magic, bsize, blocks, blocks, blocks, files, files, fsid, name_max, bsize,
                flags | ro)

    def super_options(self) -> bytes:
        """mountinfo's super options: ro or rw (sb_rdonly), then shmem_show_options /
        hugetlbfs_show_options in their order and
        formats: tmpfs's size (in KiB of whole pages), nr_inodes, mode (%03o, if not 1777),
        uid, gid, huge (no inode64: the modeled kernel, as the reference host's, is built
        without CONFIG_TMPFS_INODE64); hugetlbfs's uid, gid, mode (%o, if not 755),
        pagesize, size, min_size, nr_inodes."""
        given, shown = self.options, []
        if self.fstype == b"hugetlbfs":
            order = (b"uid", b"gid", b"mode", b"pagesize", b"size", b"min_size", b"nr_inodes")
            given = dict(given)
            given[b"pagesize"] = b"2M"
        else:
            order = (b"size", b"nr_inodes", b"mode", b"uid", b"gid", b"huge")
        for name in order:
            if name not in given:
                continue
            value = given[name]
            if name == b"mode":
                value = (b"%03o" if self.fstype == b"tmpfs" else b"%o") % int(value, 8)
            elif name in (b"size", b"min_size") and not value.endswith(b"%"):
                value = b"%dk" % (-(-_size(value) // 4096) * 4)
            shown.append(b"%s=%s" % (name, value))
        return b",".join([b"ro" if self.read_only else b"rw"] + shown)


def parse_options(fstype: bytes, data: bytes) -> tuple[dict, int]:
    """The option string's settings (name -> value) and the root's mode."""
    options, mode = {}, 0o1777 if fstype == b"tmpfs" else 0o755
    for item in filter(None, data.split(b",")):
        name, _, value = item.partition(b"=")
        if name == b"mode":
            mode = _octal(value) & 0o7777
        elif name in (b"size", b"min_size"):
            _size(value)
        elif name in (b"nr_inodes", b"uid", b"gid"):
            _number(value)
        elif name == b"pagesize" and fstype == b"hugetlbfs":
            if _size(value) != HPAGE:
                raise GuestErrno(E.EINVAL)       # hugetlbfs_parse_param: no such hstate
            continue
        elif name != b"huge" or fstype != b"tmpfs":
            raise GuestErrno(E.EINVAL)
        options[name] = value if name != b"mode" else b"%o" % mode
    if int(options.get(b"mode", b"0"), 8) == (0o1777 if fstype == b"tmpfs" else 0o755):
        del options[b"mode"]                        # the default is not shown
    return options, mode


def size_of(options: dict, budget: int) -> int | None:
    value = options.get(b"size")
    if value is None:
        return None
    if value.endswith(b"%"):
        return budget * _number(value[:-1]) // 100
    return _size(value)


def _size(value: bytes) -> int:
    """memparse: a number with an optional k/m/g... suffix."""
    scale = _SUFFIXES.get(value[-1:].lower(), 1)
    return _number(value[:-1] if scale > 1 else value) * scale


def _number(value: bytes) -> int:
    try:
        return int(value, 0)
    except ValueError:
        raise GuestErrno(E.EINVAL) from None


def _octal(value: bytes) -> int:
    try:
        return int(value, 8)
    except ValueError:
        raise GuestErrno(E.EINVAL) from None


class AnonDevices:
    """get_anon_bdev: the next free 0:N for a new superblock (deterministic: a counter)."""

    def __init__(self):
        self._next = FIRST_ANON_MINOR

    def take(self) -> int:
        minor, self._next = self._next, self._next + 1
        return makedev(0, minor)


def make_superblock(fstype: bytes, data: bytes, dev: int, clock: Callable[[], int],
                    budget: DataBudget) -> Superblock:
    options, mode = parse_options(fstype, data)
    ctx = TmpfsContext(InodeTable(first=1), clock, budget, mount="%s:%d" % (fstype.decode(), dev),
                       dev=dev, huge_pages=fstype == b"hugetlbfs")
    root = OverlayDir(ctx, ctx.meta(S_IFDIR | mode, nlink=2), None)
    if b"uid" in options or b"gid" in options:
        root.chown(_number(options.get(b"uid", b"0")), _number(options.get(b"gid", b"0")))
    return Superblock(dev, fstype, root, options)
