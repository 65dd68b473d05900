"""Inodes that are files of the host rootfs folder.

Used two ways: read-only, as the lower layer under the in-memory overlay, and, when the user asks
for write-through (`writable=True`), as the rootfs itself. Path resolution never lets a host path
escape the root: every host inode here is reached from the root through components that
namei.py has checked one by one, and the host never follows a symlink for the model
(O_NOFOLLOW, lstat, follow_symlinks=False). How a host inode is named (a name in a directory
held by a descriptor in write-through mode, so that a handle stays bound to what it opened even
when the guest renames things and plants symlinks around it) is hostref.py's concern.

What is shown of a host file (determinism): mode, size, nlink, symlink target and mtime are
rootfs content and pass through; atime and ctime are reported equal to mtime (the host's atime
and ctime record when the host touched the folder, not content); uid/gid are 0 (the guest runs as
root); st_dev and st_ino are the modeled ones (constants.ROOTFS_DEV, inodes.InodeTable);
directory sizes are 4096 whatever the host fs says. In write-through mode every change stamps the
host file's times with the virtual clock, so not even the host's mtime leaks.
"""
import os
import stat as host_stat
from dataclasses import dataclass, field
from typing import Callable

from .. import errno as E
from ..errno import GuestErrno
from .constants import (S_IFDIR, S_IFLNK, S_IFMT, S_IFREG, ROOTFS_DEV, BLOCK_SIZE, DIR_SIZE,
                        O_ACCMODE, O_WRONLY, O_RDWR, blocks_for)
from .hosterrno import guest_error
from .hostref import DETACHED, O_PATH, HostRef, close_quietly, host_call
from .inodes import InodeTable
from .node import Node
from .records import StatResult


@dataclass
class HostContext:
    table: InodeTable
    clock: Callable[[], int]
    writable: bool
    # The pipe of each host fifo some end of which is open (kernel_model/fs/fifo.py): kept here by
    # host identity, since every lookup makes a new HostNode of the same inode.
    fifo_pipes: dict = field(default_factory=dict)


def stat_from_host(ctx: HostContext, st: os.stat_result) -> StatResult:
    mode = st.st_mode
    size = DIR_SIZE if (mode & S_IFMT) == S_IFDIR else st.st_size
    ino = ctx.table.for_key((st.st_dev, st.st_ino))
    rdev = st.st_rdev if host_stat.S_ISCHR(mode) or host_stat.S_ISBLK(mode) else 0
    return StatResult(ROOTFS_DEV, ino, mode, st.st_nlink, 0, 0, rdev, size, BLOCK_SIZE,
                      blocks_for(size), st.st_mtime_ns, st.st_mtime_ns, st.st_mtime_ns,
                      st.st_mtime_ns)     # every time the host file's mtime: born then too


def host_node(ctx: HostContext, ref: HostRef) -> "HostNode | None":
    st = ref.lstat()
    if st is None:
        return None
    kind = {S_IFDIR: HostDir, S_IFREG: HostFile, S_IFLNK: HostSymlink}.get(st.st_mode & S_IFMT,
                                                                           HostNode)
    return kind(ctx, ref, st)


def host_root_dir(ctx: HostContext, host_root: bytes) -> "HostDir":
    return HostDir(ctx, HostRef(None, host_root), os.lstat(host_root))


class HostNode(Node):
    """A host inode with no modeled driver (fifo, socket, device node in the rootfs)."""
    mount = "rootfs"

    host_fd: int | None = None       # the inode's own O_PATH descriptor, once it has one

    def __init__(self, ctx: HostContext, ref: HostRef, st: os.stat_result):
        self.ctx = ctx
        self.ref = ref
        self.fmt = st.st_mode & S_IFMT
        self.ino = ctx.table.for_key((st.st_dev, st.st_ino))
        self.first_stat = st

    def pin(self) -> "HostNode":
        """Bind this inode to itself (an open file description keeps it): from now on its
        metadata comes from its own descriptor, whatever its name comes to mean. Only in
        write-through mode: the overlay's lower layer never changes under the guest."""
        if self.ctx.writable:
            if self.host_fd is None:
                self.host_fd = _open_same(self.ref, O_PATH, self.first_stat)
            self.detach()
        return self

    def detach(self) -> None:
        """Let go of the directory this inode was found in: an open file description keeps
        the inode by its own descriptor (or its data handle's), and the chain of directories
        above it, each with a descriptor, need not stay open as long as it does. (The root
        has no directory above it: its name is the rootfs folder's own path.)"""
        if self.ref.dir is not None:
            self.ref = HostRef(DETACHED, self.ref.name)

    @property
    def pipe(self):
        """The fifo's pipe while an end is open (Linux's inode->i_pipe), for fifo.py."""
        return self.ctx.fifo_pipes.get((self.first_stat.st_dev, self.first_stat.st_ino))

    @pipe.setter
    def pipe(self, state) -> None:
        key = (self.first_stat.st_dev, self.first_stat.st_ino)
        if state is None:
            self.ctx.fifo_pipes.pop(key, None)
        else:
            self.ctx.fifo_pipes[key] = state

    def can_host_stat(self) -> bool:
        """host_stat() can answer: by the inode's own descriptor, or by its name while the
        directory it was found in is still held (not once an open file let go of it)."""
        return self.host_fd is not None or self.ref.dir is not DETACHED

    def host_stat(self) -> os.stat_result:
        if self.host_fd is not None:
            return host_call(os.stat, self.host_fd)
        st = self.ref.lstat()
        if st is None:
            raise GuestErrno(E.ENOENT, "host file vanished")
        return st

    def __del__(self) -> None:
        close_quietly(self.host_fd)

    def stat(self) -> StatResult:
        return stat_from_host(self.ctx, self.host_stat())

    def _require_writable(self) -> None:
        if not self.ctx.writable:
            raise GuestErrno(E.EROFS)

    def stamp(self) -> None:
        """Give a changed host inode the virtual time, so host time never shows."""
        now = self.ctx.clock()
        self.ref.utime((now, now))

    def chmod(self, mode: int) -> None:
        self._require_writable()
        self.ref.chmod(mode & 0o7777)

    def chown(self, uid: int, gid: int) -> None:
        """Write-through files keep the host's owner (the host process may not give its files
        away), so a guest's chown is accepted and not kept, as before owners were modeled."""
        self._require_writable()

    def utimens(self, atime_ns: int | None, mtime_ns: int | None) -> None:
        self._require_writable()
        st = self.host_stat()
        times = (st.st_atime_ns if atime_ns is None else atime_ns,
                 st.st_mtime_ns if mtime_ns is None else mtime_ns)
        self.ref.utime(times)


class HostSymlink(HostNode):
    def readlink(self) -> bytes:
        if self.host_fd is not None:
            return host_call(os.readlink, b"", dir_fd=self.host_fd)    # readlinkat(fd, "")
        return self.ref.readlink()


class HostFile(HostNode):
    def read_at(self, offset: int, n: int) -> bytes:
        """Read through the path, without keeping a host fd: for the kernel's own one-off
        reads. An open file description reads through `open_reader()` instead."""
        fd = self.ref.open(os.O_RDONLY)
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
        return HostFileReader(self.ctx, self.ref.open(os.O_RDONLY))

    def open_handle(self, flags: int) -> "HostFdHandle":
        access = flags & O_ACCMODE
        if access != 0:
            self._require_writable()
        host_flags = {O_WRONLY: os.O_WRONLY, O_RDWR: os.O_RDWR}.get(access, os.O_RDONLY)
        handle = HostFdHandle(self.ctx, self.ref.open(host_flags))
        self.detach()                    # the description reaches the file through `handle`
        return handle

    def truncate(self, length: int) -> None:
        self._require_writable()
        fd = self.ref.open(os.O_WRONLY)
        try:
            host_call(os.ftruncate, fd, length)
        finally:
            os.close(fd)
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
        written = host_call(os.pwrite, self.fd, data, offset)
        self._stamp()
        return written

    def size(self) -> int:
        return os.fstat(self.fd).st_size

    def truncate(self, length: int) -> None:
        host_call(os.ftruncate, self.fd, length)
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
    """A host directory. In write-through mode its entries are names relative to its own
    O_PATH descriptor (hostref.py), opened the first time the directory is looked into, which
    is in the walk that found it, or when an open file description pins it; a directory only
    passed over (a listing's subdirectory, the last component of a stat) costs none."""

    def directory_fd(self) -> int | None:
        if self.host_fd is None and self.ctx.writable:
            self.host_fd = self.ref.open(O_PATH | os.O_DIRECTORY)
        return self.host_fd

    def entry(self, name: bytes) -> HostRef:
        if not self.ctx.writable:
            return HostRef(None, self.ref.name.rstrip(b"/") + b"/" + name)
        return HostRef(self, name)

    def names(self) -> list[bytes]:
        """The entries in the host's getdents order (os.listdir reads the directory with
        getdents, dropping "." and ".."): what the program would list natively, and the same
        on every run while the host folder does not change (ext4 hashes names with a seed of
        the file system's, fs/ext4/dir.c ext4_dx_readdir)."""
        if not self.ctx.writable:
            return host_call(os.listdir, self.ref.name)
        fd = host_call(os.open, b".", os.O_RDONLY | os.O_DIRECTORY, dir_fd=self.directory_fd())
        try:      # names listed through a descriptor come as str (surrogateescape'd bytes)
            names = [os.fsencode(name) for name in host_call(os.listdir, fd)]
            if not names and os.fstat(fd).st_nlink == 0:
                # getdents answers ENOENT on a removed directory (iterate_dir: IS_DEADDIR),
                # which the host's readdir() turns into a quiet end of directory.
                raise GuestErrno(E.ENOENT)
            return names
        finally:
            os.close(fd)

    def lookup(self, name: bytes) -> HostNode | None:
        return host_node(self.ctx, self.entry(name))

    def entries(self) -> list[tuple[bytes, Node]]:
        found = ((name, self.lookup(name)) for name in self.names())
        return [(name, node) for name, node in found if node is not None]

    def create(self, name: bytes, mode: int) -> Node:
        self._require_writable()
        entry = self.entry(name)
        fd = entry.open(os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        try:
            os.fchmod(fd, mode & 0o7777)     # explicit: the host process's umask must not apply
        finally:
            os.close(fd)
        return self._created(entry)

    def mkdir(self, name: bytes, mode: int) -> None:
        self._require_writable()
        entry = self.entry(name)
        host_call(os.mkdir, entry.name, 0o700, dir_fd=entry.dir_fd)
        entry.chmod(mode & 0o7777)
        self._created(entry)

    def mknod(self, name: bytes, mode: int) -> None:
        """A fifo or socket inode (filesystem.py has refused device nodes, as vfs_mknod does
        without CAP_MKNOD over the host)."""
        self._require_writable()
        entry = self.entry(name)
        host_call(os.mknod, entry.name, (mode & S_IFMT) | 0o600, dir_fd=entry.dir_fd)
        entry.chmod(mode & 0o7777)
        self._created(entry)

    def symlink(self, name: bytes, target: bytes) -> None:
        self._require_writable()
        entry = self.entry(name)
        host_call(os.symlink, target, entry.name, dir_fd=entry.dir_fd)
        self._created(entry)

    def link(self, name: bytes, node: Node) -> None:
        self._require_writable()
        if not isinstance(node, HostNode):
            raise GuestErrno(E.EXDEV)
        entry = self.entry(name)
        host_call(os.link, node.ref.name, entry.name, src_dir_fd=node.ref.dir_fd,
                  dst_dir_fd=entry.dir_fd, follow_symlinks=False)
        self.stamp()

    def unlink(self, name: bytes) -> None:
        self._require_writable()
        entry = self.entry(name)
        self._forget(entry)
        host_call(os.unlink, entry.name, dir_fd=entry.dir_fd)
        self.stamp()

    def rmdir(self, name: bytes) -> None:
        self._require_writable()
        entry = self.entry(name)
        st = entry.lstat()
        host_call(os.rmdir, entry.name, dir_fd=entry.dir_fd)
        if st is not None:
            self.ctx.table.forget((st.st_dev, st.st_ino))
        self.stamp()

    def rename(self, old_name: bytes, new_dir: Node, new_name: bytes) -> None:
        self._require_writable()
        if not isinstance(new_dir, HostDir):
            raise GuestErrno(E.EXDEV)
        source, target = self.entry(old_name), new_dir.entry(new_name)
        replaced = target.lstat()
        host_call(os.rename, source.name, target.name, src_dir_fd=source.dir_fd,
                  dst_dir_fd=target.dir_fd)
        if replaced is not None and replaced.st_nlink <= 1:
            self.ctx.table.forget((replaced.st_dev, replaced.st_ino))
        self.stamp()
        new_dir.stamp()

    def _created(self, entry: HostRef) -> Node:
        now = self.ctx.clock()
        entry.utime((now, now))
        self.stamp()
        node = host_node(self.ctx, entry)
        if node is None:
            raise GuestErrno(E.ENOENT, "host file vanished")
        return node

    def _forget(self, entry: HostRef) -> None:
        st = entry.lstat()
        if st is not None and st.st_nlink <= 1:
            self.ctx.table.forget((st.st_dev, st.st_ino))


def _open_same(ref: HostRef, flags: int, seen: os.stat_result) -> int:
    """Open `ref` (never following it) and check it is still the inode looked up as `seen`."""
    fd = ref.open(flags)
    st = os.fstat(fd)
    if (st.st_dev, st.st_ino) != (seen.st_dev, seen.st_ino):
        os.close(fd)
        raise GuestErrno(E.ENOENT, "host file replaced while looked up")
    return fd
