"""The in-memory overlay: the rootfs as the guest sees it when the host must stay untouched.

Modeled on Linux overlayfs with the host folder as the read-only lower layer and memory as the
upper layer:
- a directory merges its lower (host) entries with its upper entries; an upper entry hides a
  lower one of the same name; a *whiteout* hides a deleted lower entry;
- a host directory or file is wrapped in an overlay inode the first time the guest looks it up and
  that inode is kept, so it has one identity (and one inode number) for the rest of the run;
- a host file's bytes are copied into memory on its first change (copy-up); until then reads go to
  the host. Host files that are hard links of each other share one overlay inode;
- a directory created in the overlay has no lower layer (it is opaque: it never shows host
  entries, even where a deleted host directory of the same name was);
- renaming moves the inode object, so a renamed host directory keeps its (lower) contents.
Times of overlay changes come from the virtual clock; atime is not updated by reads (as with the
noatime mount option) so that reading never changes what stat says.
"""
from dataclasses import dataclass, field
from typing import Callable

from .. import errno as E
from ..errno import GuestErrno
from .constants import (MAX_LFS_FILESIZE, S_IFBLK, S_IFCHR, S_IFDIR, S_IFLNK, S_IFMT, S_IFREG,
                        ROOTFS_DEV)
from .databudget import DataBudget
from .hostfs import (HostContext, HostDir, HostFile, HostFileReader, HostNode, HostSymlink,
                     host_root_dir)
from .inodes import InodeTable
from .node import Node
from .records import Meta, StatResult, new_meta
from .sparse import SparseData
from .xattrs import Xattrs


@dataclass
class OverlayContext:
    table: InodeTable
    clock: Callable[[], int]
    budget: DataBudget = field(default_factory=DataBudget)   # file bytes held in memory
    shared_files: dict = field(default_factory=dict)    # host identity -> OverlayFile
    mount: str = "rootfs"          # every node's mount: rename and link across mounts are EXDEV

    def meta(self, mode: int, nlink: int = 1) -> Meta:
        return new_meta(ROOTFS_DEV, self.table.fresh(), mode, self.clock(), nlink)


def meta_from_lower(lower: HostNode) -> Meta:
    st = lower.first_stat
    has_rdev = (st.st_mode & S_IFMT) in (S_IFCHR, S_IFBLK)     # device nodes in the rootfs
    return Meta(ROOTFS_DEV, lower.ino, st.st_mode, st.st_nlink, st.st_mtime_ns, st.st_mtime_ns,
                st.st_mtime_ns, st.st_rdev if has_rdev else 0, btime_ns=st.st_mtime_ns)


class OverlayNode(Node):
    def __init__(self, ctx: OverlayContext, meta: Meta):
        self.ctx = ctx
        self.meta = meta
        self.fmt = meta.fmt
        self.ino = meta.ino

    @property
    def mount(self) -> str:
        return self.ctx.mount

    def same_inode(self, other: Node) -> bool:
        return self is other

    @property
    def xattrs(self) -> Xattrs:
        """The inode's extended attributes (xattrs.py), made on first use; its hard links
        are this node, so they share them."""
        if self.meta.xattrs is None:        # the rootfs is ext4, every other mount a tmpfs
            self.meta.xattrs = Xattrs(acls_first=self.meta.dev != ROOTFS_DEV)
        return self.meta.xattrs

    def xattrs_changed(self) -> None:
        self.meta.ctime_ns = self.ctx.clock()      # shmem_xattr_handler_set: i_ctime

    def size(self) -> int:
        return 0

    def stat(self) -> StatResult:
        return self.meta.to_stat(self.size())

    def chmod(self, mode: int) -> None:
        self.meta.mode = self.fmt | (mode & 0o7777)
        self.meta.ctime_ns = self.ctx.clock()
        if self.meta.xattrs is not None:
            self.meta.xattrs.chmod(mode)

    def chown(self, uid: int, gid: int) -> None:
        self.meta.chown(uid, gid, self.ctx.clock())

    def utimens(self, atime_ns: int | None, mtime_ns: int | None) -> None:
        if atime_ns is not None:
            self.meta.atime_ns = atime_ns
        if mtime_ns is not None:
            self.meta.mtime_ns = mtime_ns
        self.meta.ctime_ns = self.ctx.clock()


class OverlaySymlink(OverlayNode):
    def __init__(self, ctx: OverlayContext, meta: Meta, target: bytes):
        super().__init__(ctx, meta)
        self.target = target

    def readlink(self) -> bytes:
        return self.target

    def size(self) -> int:
        return len(self.target)


class OverlaySpecial(OverlayNode):
    """A fifo, socket or device node: visible, renamable, but with no driver of its own. A
    fifo is opened by the kernel above the file system (kernel_model/fs/fifo.py), which keeps the
    pipe of the inode in `pipe` while an end of it is open (fs/pipe.c: inode->i_pipe); a
    character device opens the driver the file system has for its number (filesystem.py)."""
    pipe = None


class OverlayFile(OverlayNode):
    """A regular file. Until its copy-up, its bytes are the host file's: while the guest has
    it open they are read through one host fd, opened by the first open file description and
    closed with the last (HostFile.open_reader), so a read is one pread."""
    fixed_offset = False
    # While shared mappings of the file exist, the page cache's view of their pages
    # (memory/page_cache.py _MappedFile): reads and writes go through them, as Linux's do.
    mapped_pages = None

    def __init__(self, ctx: OverlayContext, meta: Meta, lower: HostFile | None):
        super().__init__(ctx, meta)
        self.lower = lower
        self.data: SparseData | None = None if lower is not None else SparseData(
            budget=ctx.budget)
        self._lower_size = lower.first_stat.st_size if lower is not None else 0
        self._opens = 0                           # open file descriptions of this inode
        self._reader: HostFileReader | None = None  # the lower file, open while _opens > 0

    # The file is its own Handle: every open file description shares the one inode's bytes.
    def open_handle(self, flags: int) -> "OverlayFile":
        if self.data is None and self._reader is None:
            self._reader = self._open_lower()
        self._opens += 1
        return self

    def _open_lower(self) -> HostFileReader | None:
        try:
            return self.lower.open_reader()
        except GuestErrno as e:
            if e.errno in (E.EMFILE, E.ENFILE):
                return None          # the host is out of fds: read through the path instead
            raise

    def size(self) -> int:
        return len(self.data) if self.data is not None else self._lower_size

    def stat(self) -> StatResult:
        """st_blocks counts the pages the data holds (a hole costs none, as in tmpfs)."""
        held = self.data.cost if self.data is not None else None
        return self.meta.to_stat(self.size(), held)

    def next_data(self, offset: int) -> int | None:
        """SEEK_DATA: the written pages once copied up; a host file's bytes are all data."""
        return self.data.next_data(offset) if self.data is not None else offset

    def next_hole(self, offset: int) -> int:
        return self.data.next_hole(offset) if self.data is not None else self.size()

    def read_at(self, offset: int, n: int) -> bytes:
        if self.data is None:
            data = (self._reader or self.lower).read_at(offset, n)
        else:
            data = self.data.read(offset, n)
        return data if self.mapped_pages is None else self.mapped_pages.read(offset, data)

    def write_at(self, offset: int, data: bytes) -> int:
        if not data:
            return 0                 # an empty write changes nothing, not even past the end
        if offset >= MAX_LFS_FILESIZE:
            raise GuestErrno(E.EFBIG)                      # generic_write_check_limits()
        data = data[:MAX_LFS_FILESIZE - offset]
        written = self._copy_up().write(offset, data)      # a hole before it reads as zeros
        self.meta.touch_modified(self.ctx.clock())         # ENOSPC above leaves all unchanged
        if self.mapped_pages is not None:
            self.mapped_pages.written(offset, data[:written])
        return written

    def truncate(self, length: int) -> None:
        if length > MAX_LFS_FILESIZE:
            raise GuestErrno(E.EFBIG)                      # inode_newsize_ok(): s_maxbytes
        content = SparseData(budget=self.ctx.budget) if length == 0 else self._copy_up()
        content.truncate(length)                            # growing costs nothing (sparse.py)
        self.data = content
        self._close_lower()
        self.meta.touch_modified(self.ctx.clock())

    def close(self) -> None:
        """Closing one description leaves the inode's data alone; the last one closes the
        host file."""
        self._opens = max(0, self._opens - 1)
        if self._opens == 0:
            self._close_lower()

    def _close_lower(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def _copy_up(self) -> SparseData:
        if self.data is None:
            self.data = SparseData((self._reader or self.lower).read_all(), self.ctx.budget)
            self._close_lower()                   # the bytes are in memory from now on
        return self.data


class OverlayDir(OverlayNode):
    def __init__(self, ctx: OverlayContext, meta: Meta, lower: HostDir | None):
        super().__init__(ctx, meta)
        self.lower = lower
        self.upper: dict[bytes, OverlayNode] = {}     # looked-up lower inodes and new ones
        self.whiteouts: set[bytes] = set()
        self.dead = False          # removed (S_DEAD): still open somewhere, but holds nothing

    def lookup(self, name: bytes) -> OverlayNode | None:
        if self.dead:
            return None            # lookup_slow(): IS_DEADDIR -> ENOENT
        node = self.upper.get(name)
        if node is not None or name in self.whiteouts or self.lower is None:
            return node
        lower = self.lower.lookup(name)
        if lower is None:
            return None
        node = self.upper[name] = self._wrap(lower)
        return node

    def entries(self) -> list[tuple[bytes, Node]]:
        if self.dead:
            raise GuestErrno(E.ENOENT)       # iterate_dir() on a removed directory
        found = ((name, self.lookup(name)) for name in self._listed_names())
        return [(name, node) for name, node in found if node is not None]

    def _listed_names(self) -> list[bytes]:
        """The host's entries in its own getdents order (what a native listing of the
        unchanged folder shows), then the names the guest made here, sorted: deterministic
        whatever the order of the guest's changes."""
        lower = [] if self.lower is None else \
            [name for name in self.lower.names() if name not in self.whiteouts]
        known = set(lower)
        return lower + sorted(name for name in self.upper if name not in known)

    def is_empty(self) -> bool:
        return not self.entries()

    # --- changes -----------------------------------------------------------------------------
    def create(self, name: bytes, mode: int) -> Node:
        node = OverlayFile(self.ctx, self.ctx.meta(S_IFREG | (mode & 0o7777)), None)
        self._attach(name, node)
        return node

    def tmpfile(self, mode: int) -> Node:
        """shmem_tmpfile(): a new file with no name (nlink 0) until linkat gives it one."""
        return OverlayFile(self.ctx, self.ctx.meta(S_IFREG | (mode & 0o7777), nlink=0), None)

    def mknod(self, name: bytes, mode: int, rdev: int = 0) -> None:
        """A new fifo, socket or device node (shmem_mknod keeps a device's number; the caller
        has checked CAP_MKNOD for a device)."""
        self._require_absent(name)
        meta = self.ctx.meta(mode)
        meta.rdev = rdev
        self._attach(name, OverlaySpecial(self.ctx, meta))

    def mkdir(self, name: bytes, mode: int) -> None:
        self._require_absent(name)
        node = OverlayDir(self.ctx, self.ctx.meta(S_IFDIR | (mode & 0o7777), nlink=2), None)
        self._attach(name, node)
        self.meta.nlink += 1

    def symlink(self, name: bytes, target: bytes) -> None:
        self._require_absent(name)
        self._attach(name, OverlaySymlink(self.ctx, self.ctx.meta(S_IFLNK | 0o777), target))

    def link(self, name: bytes, node: Node) -> None:
        self._require_absent(name)
        if not isinstance(node, OverlayNode):
            raise GuestErrno(E.EXDEV)
        if node.is_dir:
            raise GuestErrno(E.EPERM)          # no hard links to directories (vfs_link)
        self._attach(name, node)
        node.meta.nlink += 1
        node.linkable = False               # vfs_link() clears I_LINKABLE once named
        node.meta.ctime_ns = self.ctx.clock()

    def unlink(self, name: bytes) -> None:
        node = self._existing(name)
        if node.is_dir:
            raise GuestErrno(E.EISDIR)
        self._detach(name)
        node.meta.nlink -= 1
        node.meta.ctime_ns = self.ctx.clock()

    def rmdir(self, name: bytes) -> None:
        node = self._existing(name)
        if not node.is_dir:
            raise GuestErrno(E.ENOTDIR)
        if not node.is_empty():
            raise GuestErrno(E.ENOTEMPTY)
        self._detach(name)
        self.meta.nlink -= 1
        node.dead = True

    def rename(self, old_name: bytes, new_dir: Node, new_name: bytes) -> None:
        """Linux rename(2) once namei has checked the paths (fs/namei.c: vfs_rename)."""
        if not isinstance(new_dir, OverlayDir):
            raise GuestErrno(E.EXDEV)
        node = self._existing(old_name)
        replaced = new_dir.lookup(new_name)
        if replaced is node:
            return                      # both names are links of one inode: nothing to do
        if replaced is not None:
            _check_replaceable(node, replaced)
            new_dir._drop(new_name, replaced)
        self._detach(old_name)
        new_dir._attach(new_name, node)
        if node.is_dir:
            self.meta.nlink -= 1
            new_dir.meta.nlink += 1
        node.meta.ctime_ns = self.ctx.clock()

    # --- helpers -----------------------------------------------------------------------------
    def _existing(self, name: bytes) -> OverlayNode:
        node = self.lookup(name)
        if node is None:
            raise GuestErrno(E.ENOENT)
        return node

    def _require_absent(self, name: bytes) -> None:
        if self.lookup(name) is not None:
            raise GuestErrno(E.EEXIST)

    def _attach(self, name: bytes, node: OverlayNode) -> None:
        self.whiteouts.discard(name)
        self.upper[name] = node
        self.meta.touch_modified(self.ctx.clock())

    def _detach(self, name: bytes) -> None:
        self.upper.pop(name, None)
        if self.lower is not None:
            self.whiteouts.add(name)
        self.meta.touch_modified(self.ctx.clock())

    def _drop(self, name: bytes, node: OverlayNode) -> None:
        """Remove an inode that a rename replaces."""
        self._detach(name)
        if node.is_dir:
            self.meta.nlink -= 1
            node.dead = True
        else:
            node.meta.nlink -= 1

    def _wrap(self, lower: HostNode) -> OverlayNode:
        meta = meta_from_lower(lower)
        if isinstance(lower, HostDir):
            return OverlayDir(self.ctx, meta, lower)
        if isinstance(lower, HostSymlink):
            return OverlaySymlink(self.ctx, meta, lower.readlink())
        if isinstance(lower, HostFile):
            key = (lower.first_stat.st_dev, lower.first_stat.st_ino)
            shared = self.ctx.shared_files.get(key)
            if shared is None:
                shared = self.ctx.shared_files[key] = OverlayFile(self.ctx, meta, lower)
            return shared
        return OverlaySpecial(self.ctx, meta)


def _check_replaceable(node: Node, replaced: "OverlayNode") -> None:
    # may_delete(): a directory only replaces a directory, and only an empty one.
    if node.is_dir and not replaced.is_dir:
        raise GuestErrno(E.ENOTDIR)
    if not node.is_dir and replaced.is_dir:
        raise GuestErrno(E.EISDIR)
    if replaced.is_dir and not replaced.is_empty():
        raise GuestErrno(E.ENOTEMPTY)


def overlay_root(host_root: bytes, table: InodeTable, clock: Callable[[], int],
                 budget: DataBudget) -> OverlayDir:
    lower = host_root_dir(HostContext(table, clock, writable=False), host_root)
    ctx = OverlayContext(table, clock, budget)
    return OverlayDir(ctx, meta_from_lower(lower), lower)
