"""Inodes that are files of the host rootfs folder.

Used two ways: read-only, as the lower layer under the in-memory overlay, and, when the user asks
for write-through (`writable=True`), as the rootfs itself. Path resolution never lets a host path
escape the root: every host path here is the root joined with components that namei.py has
already checked one by one (none of them a symlink except possibly the last, which is never
followed by the host: O_NOFOLLOW, lstat, follow_symlinks=False).

What is shown of a host file (determinism): mode, size, nlink, symlink target and mtime are
rootfs content and pass through; atime and ctime are reported equal to mtime (the host's atime
and ctime record when the host touched the folder, not content); uid/gid are 0 (the guest runs as
root); st_dev and st_ino are the modeled ones (constants.ROOTFS_DEV, inodes.InodeTable);
directory sizes are 4096 whatever the host fs says. In write-through mode every change stamps the
host file's times with the virtual clock, so not even the host's mtime leaks.
"""
import os
import stat as host_stat
from dataclasses import dataclass
from typing import Callable

from .. import errno as E
from ..errno import GuestErrno
from .constants import (S_IFDIR, S_IFLNK, S_IFMT, S_IFREG, ROOTFS_DEV, BLOCK_SIZE, DIR_SIZE,
                        O_ACCMODE, O_WRONLY, O_RDWR, blocks_for)
from .hosterrno import guest_error
from .inodes import InodeTable
from .node import Node
from .records import StatResult


@dataclass
class HostContext:
    table: InodeTable
    clock: Callable[[], int]
    writable: bool


def join(dir_path: bytes, name: bytes) -> bytes:
    return dir_path.rstrip(b"/") + b"/" + name


def stat_from_host(ctx: HostContext, st: os.stat_result) -> StatResult:
    mode = st.st_mode
    size = DIR_SIZE if (mode & S_IFMT) == S_IFDIR else st.st_size
    ino = ctx.table.for_key((st.st_dev, st.st_ino))
    rdev = st.st_rdev if host_stat.S_ISCHR(mode) or host_stat.S_ISBLK(mode) else 0
    return StatResult(ROOTFS_DEV, ino, mode, st.st_nlink, 0, 0, rdev, size, BLOCK_SIZE,
                      blocks_for(size), st.st_mtime_ns, st.st_mtime_ns, st.st_mtime_ns)


def host_lstat(path: bytes) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise guest_error(exc) from None


def host_node(ctx: HostContext, path: bytes) -> "HostNode | None":
    st = host_lstat(path)
    if st is None:
        return None
    kind = {S_IFDIR: HostDir, S_IFREG: HostFile, S_IFLNK: HostSymlink}.get(st.st_mode & S_IFMT,
                                                                           HostNode)
    return kind(ctx, path, st)


class HostNode(Node):
    """A host inode with no modeled driver (fifo, socket, device node in the rootfs)."""
    mount = "rootfs"

    def __init__(self, ctx: HostContext, path: bytes, st: os.stat_result):
        self.ctx = ctx
        self.path = path
        self.fmt = st.st_mode & S_IFMT
        self.ino = ctx.table.for_key((st.st_dev, st.st_ino))
        self.first_stat = st

    def host_stat(self) -> os.stat_result:
        st = host_lstat(self.path)
        if st is None:
            raise GuestErrno(E.ENOENT, "host file vanished")
        return st

    def stat(self) -> StatResult:
        return stat_from_host(self.ctx, self.host_stat())

    def _require_writable(self) -> None:
        if not self.ctx.writable:
            raise GuestErrno(E.EROFS)

    def stamp(self, path: bytes | None = None) -> None:
        """Give a changed host inode the virtual time, so host time never shows."""
        now = self.ctx.clock()
        _host_call(os.utime, path or self.path, ns=(now, now), follow_symlinks=False)

    def chmod(self, mode: int) -> None:
        self._require_writable()
        _host_call(os.chmod, self.path, mode & 0o7777)

    def utimens(self, atime_ns: int | None, mtime_ns: int | None) -> None:
        self._require_writable()
        st = self.host_stat()
        times = (st.st_atime_ns if atime_ns is None else atime_ns,
                 st.st_mtime_ns if mtime_ns is None else mtime_ns)
        _host_call(os.utime, self.path, ns=times, follow_symlinks=False)


class HostSymlink(HostNode):
    def readlink(self) -> bytes:
        return _host_call(os.readlink, self.path)


class HostFile(HostNode):
    def read_at(self, offset: int, n: int) -> bytes:
        """Read through the path, without keeping a host fd: for the kernel's own one-off
        reads. An open file description reads through `open_reader()` instead."""
        fd = _host_call(os.open, self.path, os.O_RDONLY | os.O_NOFOLLOW)
        try:
            return os.pread(fd, n, offset)
        finally:
            os.close(fd)

    def read_all(self) -> bytes:
        return self.read_at(0, self.host_stat().st_size)

    def open_reader(self) -> "HostFileReader":
        """The host file opened once for reading (the overlay's lower layer while the guest
        has it open): no open/close per read, and a path that later names another host file
        does not change what is read."""
        return HostFileReader(self.ctx, _host_call(os.open, self.path, os.O_RDONLY | os.O_NOFOLLOW))

    def open_handle(self, flags: int) -> "HostFdHandle":
        access = flags & O_ACCMODE
        if access != 0:
            self._require_writable()
        host_flags = {O_WRONLY: os.O_WRONLY, O_RDWR: os.O_RDWR}.get(access, os.O_RDONLY)
        return HostFdHandle(self.ctx, _host_call(os.open, self.path, host_flags | os.O_NOFOLLOW))

    def truncate(self, length: int) -> None:
        self._require_writable()
        _host_call(os.truncate, self.path, length)
        self.stamp()


class HostFdHandle:
    """An open host file: a real host fd, so that an unlinked or renamed file stays readable
    through it, as on Linux. The handle of a write-through open, and the overlay's reader of
    its lower layer (HostFile.open_reader)."""

    fixed_offset = False

    def __init__(self, ctx: HostContext, fd: int):
        self.ctx = ctx
        self.fd = fd

    def read_at(self, offset: int, n: int) -> bytes:
        try:
            return os.pread(self.fd, n, offset)
        except OSError as exc:
            raise guest_error(exc) from None

    def read_all(self) -> bytes:
        return self.read_at(0, os.fstat(self.fd).st_size)

    def write_at(self, offset: int, data: bytes) -> int:
        written = _host_call(os.pwrite, self.fd, data, offset)
        self._stamp()
        return written

    def size(self) -> int:
        return os.fstat(self.fd).st_size

    def truncate(self, length: int) -> None:
        _host_call(os.ftruncate, self.fd, length)
        self._stamp()

    def stat(self) -> StatResult:
        return stat_from_host(self.ctx, os.fstat(self.fd))

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __del__(self) -> None:
        # A backstop: a run that ends with processes still holding the file (a deadlock, an
        # instruction budget) never closes its descriptions; the host fd must not leak.
        try:
            self.close()
        except (OSError, TypeError):      # TypeError: `os` already torn down at exit
            pass

    def _stamp(self) -> None:
        now = self.ctx.clock()
        os.utime(self.fd, ns=(now, now))


class HostFileReader(HostFdHandle):
    """The overlay's read-only view of a host file, with a read-ahead window as a page cache
    would keep: a program reading one byte at a time (dd bs=1) makes one host pread per
    window instead of one per byte. The lower layer does not change under a mounted overlay
    (overlayfs calls that undefined), so a window read once stays right."""

    WINDOW = 64 << 10

    def __init__(self, ctx: HostContext, fd: int):
        super().__init__(ctx, fd)
        self._start = 0                # the window: the file's bytes [_start, _start+len)
        self._window = b""

    def read_at(self, offset: int, n: int) -> bytes:
        at = offset - self._start
        if 0 <= at and at + n <= len(self._window):
            return self._window[at:at + n]
        if n >= self.WINDOW:
            return super().read_at(offset, n)       # large reads pass straight through
        self._start, self._window = offset, super().read_at(offset, self.WINDOW)
        return self._window[:n]

    def write_at(self, offset: int, data: bytes) -> int:
        raise GuestErrno(E.EBADF)                  # a reader never writes (the overlay copies up)

    def truncate(self, length: int) -> None:
        raise GuestErrno(E.EBADF)


class HostDir(HostNode):
    def names(self) -> list[bytes]:
        return sorted(_host_call(os.listdir, self.path))

    def lookup(self, name: bytes) -> HostNode | None:
        return host_node(self.ctx, join(self.path, name))

    def entries(self) -> list[tuple[bytes, Node]]:
        found = ((name, self.lookup(name)) for name in self.names())
        return [(name, node) for name, node in found if node is not None]

    def create(self, name: bytes, mode: int) -> Node:
        self._require_writable()
        path = join(self.path, name)
        fd = _host_call(os.open, path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, 0o600)
        try:
            os.fchmod(fd, mode & 0o7777)     # explicit: the host process's umask must not apply
        finally:
            os.close(fd)
        return self._created(path)

    def mkdir(self, name: bytes, mode: int) -> None:
        self._require_writable()
        path = join(self.path, name)
        _host_call(os.mkdir, path, 0o700)
        _host_call(os.chmod, path, mode & 0o7777)
        self._created(path)

    def symlink(self, name: bytes, target: bytes) -> None:
        self._require_writable()
        path = join(self.path, name)
        _host_call(os.symlink, target, path)
        self._created(path)

    def link(self, name: bytes, node: Node) -> None:
        self._require_writable()
        if not isinstance(node, HostNode):
            raise GuestErrno(E.EXDEV)
        _host_call(os.link, node.path, join(self.path, name), follow_symlinks=False)
        self.stamp()

    def unlink(self, name: bytes) -> None:
        self._require_writable()
        path = join(self.path, name)
        self._forget(path)
        _host_call(os.unlink, path)
        self.stamp()

    def rmdir(self, name: bytes) -> None:
        self._require_writable()
        path = join(self.path, name)
        st = host_lstat(path)
        _host_call(os.rmdir, path)
        if st is not None:
            self.ctx.table.forget((st.st_dev, st.st_ino))
        self.stamp()

    def rename(self, old_name: bytes, new_dir: Node, new_name: bytes) -> None:
        self._require_writable()
        if not isinstance(new_dir, HostDir):
            raise GuestErrno(E.EXDEV)
        source, target = join(self.path, old_name), join(new_dir.path, new_name)
        replaced = host_lstat(target)
        _host_call(os.rename, source, target)
        if replaced is not None and replaced.st_nlink <= 1:
            self.ctx.table.forget((replaced.st_dev, replaced.st_ino))
        self.stamp()
        new_dir.stamp()

    def _created(self, path: bytes) -> Node:
        self.stamp(path)
        self.stamp()
        node = host_node(self.ctx, path)
        if node is None:
            raise GuestErrno(E.ENOENT, "host file vanished")
        return node

    def _forget(self, path: bytes) -> None:
        st = host_lstat(path)
        if st is not None and st.st_nlink <= 1:
            self.ctx.table.forget((st.st_dev, st.st_ino))


def _host_call(function, *args, **kwargs):
    try:
        return function(*args, **kwargs)
    except OSError as exc:
        raise guest_error(exc) from None
