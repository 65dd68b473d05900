"""A process's file descriptor table: fd -> (open file description, close-on-exec)."""
from dataclasses import dataclass

from . import errno as E
from .errno import GuestErrno
from .flags import O_PATH
from .notify.dnotify import flush as flush_dnotify

FD_CLOEXEC = 1
DEFAULT_NOFILE = 1024      # RLIMIT_NOFILE soft limit Linux gives by default
NR_OPEN_DEFAULT = 64       # the fd slots a new table has (BITS_PER_LONG of the 64-bit kernel)


def table_size_for(fd: int) -> int:
    """The fdtable's max_fds once `fd` is in it: 64, then powers of two (fs/file.c
    alloc_fdtable: fd / 128 rounded up to a power of two, times 128). The host's 6.18 kernel
    gives 128 for fds 64-127, 256 for 128-255, 512 for 256-511 (probed with select)."""
    size = NR_OPEN_DEFAULT
    while size <= fd:
        size *= 2
    return size


@dataclass
class FdEntry:
    """One descriptor: the open file it refers to and its close-on-exec flag."""
    file: object               # an OpenFile (shared by dup'ed fds: the offset is shared)
    cloexec: bool = False


class FdTable:
    def __init__(self, limit: int = DEFAULT_NOFILE):
        self.entries: dict[int, FdEntry] = {}
        self.limit = limit
        # The kernel's record locks (fs/locks.py), whose POSIX locks this table owns: closing
        # any fd of an inode drops them (locks_remove_posix); None outside a kernel.
        self.locks = None
        # The table's size, which only grows (expand_files), until a fork copies it sized by
        # its highest open fd (dup_fd); select cuts its nfds to it (core_sys_select).
        self.max_fds = NR_OPEN_DEFAULT

    def get(self, fd: int):
        entry = self.entries.get(fd)
        if entry is None:
            raise GuestErrno(E.EBADF)
        return entry.file

    def get_usable(self, fd: int):
        """fdget()/fget() for a call that acts on the file (ioctl, mmap, fsync...): an O_PATH
        description (FMODE_PATH) only names a place for *at() calls, fstat, dup, close and
        the fd flags, so it is EBADF here as a closed fd is."""
        file = self.get(fd)
        if getattr(file, "flags", 0) & O_PATH:
            raise GuestErrno(E.EBADF)
        return file

    def entry(self, fd: int) -> FdEntry:
        entry = self.entries.get(fd)
        if entry is None:
            raise GuestErrno(E.EBADF)
        return entry

    def lowest_free(self, start: int = 0) -> int:
        fd = start
        while fd in self.entries:
            fd += 1
        if fd >= self.limit:
            raise GuestErrno(E.EMFILE)
        return fd

    def install(self, file, *, cloexec: bool = False, at: int | None = None, minimum: int = 0) -> int:
        """Install `file` at `at` (closing what was there) or at the lowest free fd >= minimum."""
        fd = self.lowest_free(minimum) if at is None else at
        if fd < 0 or fd >= self.limit:
            raise GuestErrno(E.EBADF)
        _retain(file)            # first: reinstalling a file over its only fd must not close it
        if fd in self.entries:
            self.close(fd)
        self.entries[fd] = FdEntry(file, cloexec)
        if fd >= self.max_fds:
            self.max_fds = table_size_for(fd)
        return fd

    def close(self, fd: int) -> None:
        entry = self.entries.pop(fd, None)
        if entry is None:
            raise GuestErrno(E.EBADF)
        if self.locks is not None:
            self.locks.closed(self, entry.file)
        if getattr(entry.file, "dnotify", None):
            flush_dnotify(self, entry.file)      # filp_close: dnotify_flush
        _release(entry.file, self.locks)

    def close_all(self) -> None:
        for fd in sorted(self.entries):
            self.close(fd)

    def close_on_exec(self) -> None:
        for fd in sorted(self.entries):
            if self.entries[fd].cloexec:
                self.close(fd)

    def copy(self) -> "FdTable":
        new = FdTable(self.limit)
        new.locks = self.locks
        for fd, entry in sorted(self.entries.items()):
            new.entries[fd] = FdEntry(entry.file, entry.cloexec)
            _retain(entry.file)
        new.max_fds = table_size_for(max(self.entries, default=-1))
        return new

    def targets(self) -> dict[int, object]:
        return {fd: e.file for fd, e in sorted(self.entries.items())}


def retain_file(file) -> None:
    """Hold an open file description outside any table (a socket message carrying it in an
    SCM_RIGHTS message): it stays open until `release_file`."""
    _retain(file)


def release_file(file) -> None:
    _release(file)


def _retain(file) -> None:
    """Count references to an open file description: it closes when the last fd goes."""
    file.refs = getattr(file, "refs", 0) + 1


def _release(file, locks=None) -> None:
    file.refs -= 1
    if file.refs == 0:
        if locks is not None:
            locks.release(file)              # its OFD locks (locks_remove_file)
        file.close()
