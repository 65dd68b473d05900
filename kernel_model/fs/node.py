"""The inode interface every file-system object implements, and its Linux default answers.

Path resolution (namei.py) and the FileSystem facade only talk to this interface; the rootfs
backends (overlay.py, hostfs.py) and the synthetic mounts (devfs.py, procfs.py) implement it.
A default method answers what Linux answers when the inode has no such operation
(fs/namei.c: vfs_mkdir returns EPERM when `i_op->mkdir` is missing, lookup_open EACCES when
`i_op->create` is missing, etc.).
"""
from typing import Protocol

from .. import errno as E
from ..errno import GuestErrno
from .constants import S_IFDIR, S_IFIFO, S_IFLNK, S_IFREG, O_ACCMODE, O_RDONLY
from .records import StatResult


class Handle(Protocol):
    """The data behind an open file description (what OpenFile reads and writes)."""

    fixed_offset: bool      # lseek always answers 0 (Linux's null_lseek/noop_llseek devices)

    def read_at(self, offset: int, n: int) -> bytes: ...
    def write_at(self, offset: int, data: bytes) -> int: ...
    def size(self) -> int: ...
    def truncate(self, length: int) -> None: ...
    def stat(self) -> StatResult: ...
    def close(self) -> None: ...


class Node:
    """One inode. `fmt` is its S_IFMT type, `ino` its guest inode number, `mount` names its
    mount (rename and link across mounts fail with EXDEV)."""

    fmt: int = 0
    ino: int = 0
    mount: str = ""
    fd: int | None = None       # set on /proc/PID/fd/N links: the fd they name (magic links)
    magic = False               # /proc/PID/exe, cwd, root and fd/N: procfs's magic links
    opens = None                # /proc/PID/ns/* links: the open file their jump reaches
    xattrs = None               # an inode that keeps extended attributes has an Xattrs here
    # I_LINKABLE: an O_TMPFILE inode opened without O_EXCL, which linkat(2) may give a name
    # although it has none (fs/namei.c vfs_tmpfile, vfs_link)
    linkable = False

    @property
    def is_dir(self) -> bool:
        return self.fmt == S_IFDIR

    @property
    def is_symlink(self) -> bool:
        return self.fmt == S_IFLNK

    @property
    def is_regular(self) -> bool:
        return self.fmt == S_IFREG

    @property
    def is_fifo(self) -> bool:
        return self.fmt == S_IFIFO

    def pin(self) -> "Node":
        """The inode an open file description keeps: one that stays what was opened even if
        its name comes to mean something else (hostfs.py binds host inodes; others already
        are the inode itself)."""
        return self

    def same_inode(self, other: "Node") -> bool:
        return self.mount == other.mount and self.ino == other.ino

    def stat(self) -> StatResult:
        raise NotImplementedError

    # --- directories -----------------------------------------------------------------------
    def lookup(self, name: bytes) -> "Node | None":
        raise GuestErrno(E.ENOTDIR)

    def entries(self) -> list[tuple[bytes, "Node"]]:
        """Children in the order getdents reports them (sorted unless the mount says otherwise)."""
        raise GuestErrno(E.ENOTDIR)

    def create(self, name: bytes, mode: int) -> "Node":
        raise GuestErrno(E.EACCES)

    def tmpfile(self, mode: int) -> "Node":
        """An unnamed regular file of this directory's file system (O_TMPFILE)."""
        raise GuestErrno(E.EOPNOTSUPP)      # vfs_tmpfile(): no i_op->tmpfile

    def mkdir(self, name: bytes, mode: int) -> None:
        raise GuestErrno(E.EPERM)

    def mknod(self, name: bytes, mode: int) -> None:
        raise GuestErrno(E.EPERM)           # vfs_mknod(): no i_op->mknod

    def unlink(self, name: bytes) -> None:
        raise GuestErrno(E.EPERM)

    def rmdir(self, name: bytes) -> None:
        raise GuestErrno(E.EPERM)

    def symlink(self, name: bytes, target: bytes) -> None:
        raise GuestErrno(E.EPERM)

    def link(self, name: bytes, node: "Node") -> None:
        raise GuestErrno(E.EPERM)

    def rename(self, old_name: bytes, new_dir: "Node", new_name: bytes) -> None:
        raise GuestErrno(E.EPERM)

    # --- symlinks --------------------------------------------------------------------------
    def readlink(self) -> bytes:
        raise GuestErrno(E.EINVAL)

    # --- data and attributes ---------------------------------------------------------------
    def open_handle(self, flags: int) -> Handle:
        # No driver behind this inode (a host fifo, socket or device node inside the rootfs).
        raise GuestErrno(E.ENXIO)

    def truncate(self, length: int) -> None:
        raise GuestErrno(E.EISDIR if self.is_dir else E.EINVAL)

    def chmod(self, mode: int) -> None:
        raise GuestErrno(E.EPERM)

    def chown(self, uid: int, gid: int) -> None:
        raise GuestErrno(E.EPERM)

    def utimens(self, atime_ns: int | None, mtime_ns: int | None) -> None:
        raise GuestErrno(E.EPERM)


def wants_write(flags: int) -> bool:
    return (flags & O_ACCMODE) != O_RDONLY


class BytesHandle:
    """A read-only snapshot of generated text (a /proc file), taken when it is opened."""

    fixed_offset = False

    def __init__(self, data: bytes, stat: StatResult):
        self._data = data
        self._stat = stat

    def read_at(self, offset: int, n: int) -> bytes:
        return self._data[offset:offset + n]

    def write_at(self, offset: int, data: bytes) -> int:
        raise GuestErrno(E.EBADF)

    def size(self) -> int:
        return len(self._data)

    def truncate(self, length: int) -> None:
        raise GuestErrno(E.EINVAL)

    def stat(self) -> StatResult:
        return self._stat

    def close(self) -> None:
        self._data = b""
