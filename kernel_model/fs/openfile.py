"""Open file descriptions: what an fd refers to.

One OpenFile is shared by every fd dup'ed or inherited from the one open() (so the offset is
shared, as in Linux's struct file). `close()` is called when the last fd referring to it goes.
"""
from typing import Callable

from .. import errno as E
from ..errno import GuestErrno
from .constants import (O_ACCMODE, O_APPEND, O_PATH, O_RDONLY, O_RDWR, O_WRONLY, SEEK_CUR,
                        SEEK_DATA, SEEK_END, SEEK_HOLE, SEEK_SET)
from .fsnotify import FAN_ACCESS_PERM, IN_ACCESS, IN_CLOSE_NOWRITE, IN_CLOSE_WRITE, IN_MODIFY
from .node import Handle, Node
from .records import DirEntry, StatResult

PAGE_SIZE = 4096


class OpenFile:
    is_tty = False
    # fsnotify.py's registry and the directory the file was opened through, when it was
    # opened by path (filesystem.py _watched): reads, writes and the close are reported there.
    notify = None
    notify_parent = None
    notify_name = b""
    # opened with no name (O_TMPFILE): its dentry is never hashed, so even once linkat gave
    # the inode a name, /proc/PID/fd/N still reads "... (deleted)" (d_unlinked)
    unnamed = False

    def __init__(self, path: bytes, flags: int, node: Node, handle: Handle | None,
                 listing: Callable[[], list[DirEntry]] | None = None):
        self.path = path
        self.flags = flags
        self.node = node
        self._handle = handle
        self._listing = listing          # directories: "." and ".." then the sorted entries
        self._snapshot: list[DirEntry] | None = None
        self.position = 0
        self.closed = False

    # --- access mode -------------------------------------------------------------------------
    @property
    def readable(self) -> bool:
        return not self.flags & O_PATH and self.flags & O_ACCMODE in (O_RDONLY, O_RDWR)

    @property
    def writable(self) -> bool:
        return not self.flags & O_PATH and self.flags & O_ACCMODE in (O_WRONLY, O_RDWR)

    def _data(self, for_write: bool) -> Handle:
        if not (self.writable if for_write else self.readable):
            raise GuestErrno(E.EBADF)
        if self._handle is None:
            raise GuestErrno(E.EISDIR)
        return self._handle

    # --- data ----------------------------------------------------------------------------------
    def read(self, n: int) -> bytes:
        """Read at the file position (n >= 0, and the position never is negative: pread's
        checks are not needed here, on the path of every read(2)). `readable` and _data's
        checks are spelled out: this runs for every read(2), dd bs=1's included."""
        handle, flags, notify = self._handle, self.flags, self.notify
        if handle is None or flags & O_PATH or flags & O_ACCMODE not in (O_RDONLY, O_RDWR):
            handle = self._data(for_write=False)         # raises the right errno
        if notify is not None and notify.perm_marks:
            notify.permission(self, FAN_ACCESS_PERM)     # rw_verify_area: fsnotify_perm
        data = handle.read_at(self.position, n)
        self.position += len(data)
        if data and notify is not None and notify.watches:
            self._report(IN_ACCESS)
        return data

    def _report(self, mask: int) -> None:
        self.notify.inode_event(self.node, mask, self.notify_parent, self.notify_name, self)

    def write(self, data: bytes) -> int:
        handle, flags = self._handle, self.flags
        if handle is None or flags & O_PATH or flags & O_ACCMODE not in (O_WRONLY, O_RDWR):
            handle = self._data(for_write=True)          # raises the right errno (as read)
        if flags & O_APPEND:
            self.position = handle.size()
        written = handle.write_at(self.position, bytes(data))
        self.position += written
        notify = self.notify
        if written and notify is not None and notify.watches:
            self._report(IN_MODIFY)
        return written

    def pread(self, n: int, off: int) -> bytes:
        handle = self._data(for_write=False)
        if n < 0 or off < 0:
            raise GuestErrno(E.EINVAL)
        if self.notify is not None and self.notify.perm_marks:
            self.notify.permission(self, FAN_ACCESS_PERM)
        data = handle.read_at(off, n)
        if data and self.notify is not None and self.notify.watches:
            self._report(IN_ACCESS)
        return data

    def pwrite(self, data: bytes, off: int) -> int:
        handle = self._data(for_write=True)
        if off < 0:
            raise GuestErrno(E.EINVAL)
        if self.flags & O_APPEND:
            off = handle.size()      # Linux: pwrite on an O_APPEND file appends (man 2 pwrite)
        written = handle.write_at(off, bytes(data))
        if written and self.notify is not None and self.notify.watches:
            self._report(IN_MODIFY)
        return written

    def seek(self, off: int, whence: int) -> int:
        if self.flags & O_PATH:
            raise GuestErrno(E.EBADF)
        if whence not in (SEEK_SET, SEEK_CUR, SEEK_END, SEEK_DATA, SEEK_HOLE):
            raise GuestErrno(E.EINVAL)
        if self._handle is not None and self._handle.fixed_offset:
            return 0
        size = self._handle.size() if self._handle is not None else 0
        if whence in (SEEK_DATA, SEEK_HOLE):
            new = _seek_hole_or_data(self._handle, size, off, whence)
        else:
            new = _seek_target(self.position, size, off, whence)
        if new < 0:
            raise GuestErrno(E.EINVAL)
        if self._listing is not None and new == 0:
            self._snapshot = None            # rewinddir(): list the directory afresh
        self.position = new
        return new

    def truncate(self, length: int) -> None:
        if length < 0 or not self.writable or not self.node.is_regular or self._handle is None:
            raise GuestErrno(E.EINVAL)       # do_sys_ftruncate()
        self._handle.truncate(length)
        if self.notify is not None and self.notify.watches:
            self._report(IN_MODIFY)

    def allocate(self, offset: int, length: int, *, keep_size: bool, punch: bool) -> None:
        """fallocate's work on a memory-backed file (mm/shmem.c shmem_fallocate), once
        impls/fallocate.py has checked the call: a punched hole reads as zeros (within the
        size, which it never changes); an allocation past the end grows the file with zeros
        unless keep_size; a reservation within it changes nothing that can be seen."""
        handle = self._handle
        if handle is None:
            raise GuestErrno(E.EOPNOTSUPP)
        size = handle.size()
        if punch:
            end = min(offset + length, size)
            if end > offset:
                handle.write_at(offset, bytes(end - offset))
        elif not keep_size and offset + length > size:
            handle.truncate(offset + length)

    # --- metadata and directories --------------------------------------------------------------
    def data_pages(self, first: int, last: int) -> int:
        """How many of pages first..last (inclusive) hold the file's data: the pages a page cache
        holding the whole file has (cachestat). A hole (a handle's next_data/next_hole: pages
        never written) is not cached, as tmpfs allocates no page for it."""
        if self._handle is None or self._handle.fixed_offset:
            return 0
        size = self._handle.size()
        start, end = first * PAGE_SIZE, min((last + 1) * PAGE_SIZE, size)
        cached = 0
        while start < end:
            data = self._handle.next_data(start) if hasattr(self._handle, "next_data") else start
            if data is None or data >= end:
                break
            hole = self._handle.next_hole(data) if hasattr(self._handle, "next_hole") else size
            stop = min(hole, end)
            cached += (stop + PAGE_SIZE - 1) // PAGE_SIZE - data // PAGE_SIZE
            start = (stop + PAGE_SIZE - 1) // PAGE_SIZE * PAGE_SIZE
        return cached

    def stat(self) -> StatResult:
        return self._handle.stat() if self._handle is not None else self.node.stat()

    def getdents(self, limit: int | None = None) -> list[DirEntry]:
        """Entries from the current position on (at most `limit`), advancing the position.

        The position is an index into the listing, so a caller whose buffer holds fewer entries
        can seek back to `position - unused`."""
        if self._listing is None or self.flags & O_PATH:
            raise GuestErrno(E.ENOTDIR if self._listing is None else E.EBADF)
        if self._snapshot is None:
            self._snapshot = self._listing()
        end = len(self._snapshot) if limit is None else self.position + limit
        entries = self._snapshot[self.position:end]
        self.position += len(entries)
        return entries

    def close(self) -> None:
        if not self.closed and self._handle is not None:
            self._handle.close()
        if not self.closed and self.notify is not None and self.notify.watches:
            self._report(IN_CLOSE_WRITE if self.writable else IN_CLOSE_NOWRITE)
        self.closed = True


def fd_link_text(f) -> bytes:
    """What /proc/PID/fd/N reads for the open file `f` (fs/d_path.c d_path): its path, or its
    own text for a file outside the tree (pipe:[N], anon_inode:[...]); a regular file whose
    inode has no name left (unlinked) or that was opened with none (O_TMPFILE) gets
    " (deleted)" after it (d_path of a d_unlinked dentry)."""
    text = getattr(f, "proc_link", None) or getattr(f, "path", b"") or b"anon_inode:[unknown]"
    node = getattr(f, "node", None)
    if isinstance(node, Node) and node.is_regular and text.startswith(b"/") and \
            not text.endswith(DELETED) and (f.unnamed or node.stat().nlink == 0):
        return text + DELETED
    return text


DELETED = b" (deleted)"


def _seek_target(position: int, size: int, off: int, whence: int) -> int:
    if whence == SEEK_SET:
        return off
    if whence == SEEK_CUR:
        return position + off
    return size + off                        # SEEK_END


def _seek_hole_or_data(handle: Handle | None, size: int, off: int, whence: int) -> int:
    """SEEK_DATA / SEEK_HOLE (mapping_seek_hole_data, as tmpfs answers): ENXIO at or past the
    end (and for a negative offset, compared unsigned); the data a handle says it holds
    (`next_data`, `next_hole`), else all of the file is data up to its end."""
    if off < 0 or off >= size:
        raise GuestErrno(E.ENXIO)
    if whence == SEEK_HOLE:
        return handle.next_hole(off) if hasattr(handle, "next_hole") else size
    found = handle.next_data(off) if hasattr(handle, "next_data") else off
    if found is None:
        raise GuestErrno(E.ENXIO)
    return found
