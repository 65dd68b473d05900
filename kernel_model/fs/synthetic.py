"""Building blocks of the synthetic mounts (/dev, /proc): in-memory directories, symlinks and
read-only generated files whose contents come from the kernel, not from the rootfs."""
from typing import Callable

from .. import errno as E
from ..errno import GuestErrno
from .constants import DEVTMPFS_DEV, S_IFDIR
from .node import BytesHandle, Node, wants_write
from .records import Meta, StatResult, new_meta
from .xattrs import Xattrs


class SyntheticNode(Node):
    def __init__(self, mount: str, meta: Meta):
        self.mount = mount
        self.meta = meta
        self.fmt = meta.fmt
        self.ino = meta.ino

    def stat(self) -> StatResult:
        return self.meta.to_stat(self.size())

    def size(self) -> int:
        return 0

    @property
    def xattrs(self) -> Xattrs | None:
        """devtmpfs is a tmpfs: its inodes keep attributes and ACLs as tmpfs's do (made on
        first use); procfs's and devpts's have no handlers (None: EOPNOTSUPP)."""
        if self.meta.dev != DEVTMPFS_DEV:
            return None
        if self.meta.xattrs is None:
            self.meta.xattrs = Xattrs()
        return self.meta.xattrs

    def xattrs_changed(self) -> None:
        """The synthetic mounts keep no clock: the ctime stays (as their chown's does)."""


class SyntheticDir(SyntheticNode):
    """A directory whose children are fixed (or computed on each lookup by a subclass).

    `ordered=True` lists children in the order given instead of sorted by name (Linux lists
    /proc/PID/fd in fd order)."""

    def __init__(self, mount: str, meta: Meta, children: dict[bytes, Node] | None = None,
                 ordered: bool = False):
        super().__init__(mount, meta)
        self._children = children or {}
        self._ordered = ordered

    def children(self) -> dict[bytes, Node]:
        return self._children

    def lookup(self, name: bytes) -> Node | None:
        return self.children().get(name)

    def entries(self) -> list[tuple[bytes, Node]]:
        children = self.children()
        names = list(children) if self._ordered else sorted(children)
        return [(name, children[name]) for name in names]


class LazyDir(SyntheticDir):
    """A directory whose children are made when they are looked up: `makers()` gives each name
    the function that makes that child. A /proc folder's entries are views of the kernel's state
    at the lookup, and making all of them to resolve one name (busybox reads /proc/self/exe at
    every start) made the whole /proc/sys tree and every process's folder each time."""

    def __init__(self, mount: str, meta: Meta,
                 makers: Callable[[], dict[bytes, Callable[[], Node]]], ordered: bool = False):
        super().__init__(mount, meta, None, ordered)
        self._makers = makers

    def children(self) -> dict[bytes, Node]:
        return {name: make() for name, make in self._makers().items()}

    def lookup(self, name: bytes) -> Node | None:
        make = self._makers().get(name)
        return None if make is None else make()


class SyntheticSymlink(SyntheticNode):
    def __init__(self, mount: str, meta: Meta, target: Callable[[], bytes]):
        super().__init__(mount, meta)
        self._target = target

    def readlink(self) -> bytes:
        return self._target()

    def size(self) -> int:
        return len(self._target())


class GeneratedFile(SyntheticNode):
    """A file whose text is generated when it is opened (like a seq_file in /proc: st_size is
    0, and the content is a snapshot taken at open). Read-only unless it has a `write`
    (position, bytes) -> bytes taken: a writable /proc/sys value."""

    def __init__(self, mount: str, meta: Meta, text: Callable[[], bytes],
                 write: Callable[[int, bytes], int] | None = None):
        super().__init__(mount, meta)
        self._text = text
        self._write = write

    def open_handle(self, flags: int) -> BytesHandle:
        if not wants_write(flags):
            return BytesHandle(self._text(), self.stat())
        if self._write is None:
            raise GuestErrno(E.EACCES)     # proc_sys_permission: no write, even for root
        return WritableText(self._text(), self.stat(), self._write)


class WritableText(BytesHandle):
    """An open writable /proc/sys file: each write(2) goes to the value's handler at the file
    position (proc_sys_call_handler); O_TRUNC changes nothing (proc_sys_setattr)."""

    def __init__(self, data: bytes, stat: StatResult, write: Callable[[int, bytes], int]):
        super().__init__(data, stat)
        self._write = write

    def write_at(self, offset: int, data: bytes) -> int:
        return self._write(offset, data) if data else 0

    def truncate(self, length: int) -> None:
        pass


def synthetic_meta(dev: int, ino: int, fmt: int, perm: int) -> Meta:
    nlink = 2 if fmt == S_IFDIR else 1
    return new_meta(dev, ino, fmt | perm, 0, nlink)

