"""Advisory record locks: fcntl's POSIX locks and open-file-description locks (fs/locks.c).

A lock covers bytes [start, end] of an inode (end None: to the end of any file size) and is
a read (shared) or write (exclusive) lock of one owner. A POSIX lock's owner is the fd table
(Linux's fl_owner, current->files: a fork's child has a table of its own and none of the
parent's locks; closing any fd of the inode drops all of the table's locks on it); an OFD
lock's owner is the open file description (dropped when it closes). Two locks conflict when
their owners differ, their ranges overlap and one is a write lock. Setting a lock replaces
the owner's own locks over its range (splitting them) and merges it with the owner's
adjacent or overlapping locks of the same type (posix_lock_inode). F_SETLKW sleeps while a
conflict lasts, unless sleeping would close a cycle of POSIX owners each waiting on the next
(posix_locks_deadlock: EDEADLK).
"""
from dataclasses import dataclass

from .. import errno as E
from ..blocking import WouldBlock
from ..errno import GuestErrno

F_RDLCK, F_WRLCK, F_UNLCK = 0, 1, 2


@dataclass(frozen=True)
class Lock:
    owner: object               # an FdTable (POSIX) or an open file description (OFD)
    kind: int                   # F_RDLCK or F_WRLCK
    start: int
    end: int | None             # inclusive; None: to the end of the file, whatever its size
    pid: int                    # the locker's tgid, what F_GETLK reports (-1 for OFD locks)
    ofd: bool = False

    def overlaps(self, start: int, end: int | None) -> bool:
        return (end is None or self.start <= end) and (self.end is None or start <= self.end)

    def conflicts(self, other: "Lock") -> bool:
        return (self.owner is not other.owner and self.overlaps(other.start, other.end)
                and F_WRLCK in (self.kind, other.kind))


def _before(end: int | None, start: int) -> bool:
    """Whether a range ending at `end` ends before `start - 1` (neither touching nor
    overlapping a range starting at `start`)."""
    return end is not None and end < start - 1


class LockTable:
    """Every inode's locks, by an inode key (mount, ino), and who waits on whom."""

    def __init__(self, wakeup, leases=None):
        """`leases`: the inodes' leases (leases.py), which also go with a description's last
        close (locks_remove_file)."""
        self._wakeup = wakeup
        self.leases = leases
        self._locks: dict[tuple, list[Lock]] = {}
        self._waiting: dict[object, object] = {}    # POSIX owner -> the owner it waits on

    def holds(self, owner) -> bool:
        return any(lock.owner is owner for locks in self._locks.values() for lock in locks)

    def locks(self, key) -> list[Lock]:
        return list(self._locks.get(key, ()))

    def conflict(self, key, wanted: Lock) -> Lock | None:
        """The first lock that keeps `wanted` from being set (F_GETLK's answer)."""
        return next((lock for lock in self._locks.get(key, ()) if lock.conflicts(wanted)), None)

    def set(self, key, wanted: Lock, wait: bool, channel) -> None:
        """F_SETLK(W): place `wanted` (F_UNLCK: remove the owner's locks over its range);
        EAGAIN on a conflict, or sleep on `channel` (WouldBlock raised by `sleep`)."""
        if wanted.kind != F_UNLCK:
            blocker = self.conflict(key, wanted)
            if blocker is not None:
                if not wait:
                    raise GuestErrno(E.EAGAIN)
                if not wanted.ofd and self._would_deadlock(wanted.owner, blocker.owner):
                    raise GuestErrno(E.EDEADLK)
                if not wanted.ofd:
                    self._waiting[wanted.owner] = blocker.owner
                raise WouldBlock(channel, "F_SETLKW on a locked range")
        self._waiting.pop(wanted.owner, None)
        self._place(key, wanted)
        self._wakeup(channel)

    def _would_deadlock(self, owner, blocker) -> bool:
        seen = set()
        while blocker is not None and id(blocker) not in seen:
            if blocker is owner:
                return True
            seen.add(id(blocker))
            blocker = self._waiting.get(blocker)
        return False

    def stop_waiting(self, owner) -> None:
        self._waiting.pop(owner, None)

    def _place(self, key, wanted: Lock) -> None:
        kept, start, end = [], wanted.start, wanted.end
        for lock in self._locks.get(key, ()):
            if lock.owner is not wanted.owner or not self._touches(lock, start, end, wanted):
                kept.append(lock)
                continue
            if wanted.kind != F_UNLCK and lock.kind == wanted.kind:
                start = min(start, lock.start)          # merged into the new lock
                end = None if lock.end is None or end is None else max(end, lock.end)
                continue
            if lock.start < wanted.start:               # the part before the new range
                kept.append(Lock(lock.owner, lock.kind, lock.start, wanted.start - 1, lock.pid,
                                 lock.ofd))
            if wanted.end is not None and (lock.end is None or lock.end > wanted.end):
                kept.append(Lock(lock.owner, lock.kind, wanted.end + 1, lock.end, lock.pid,
                                 lock.ofd))
        if wanted.kind != F_UNLCK:
            kept.append(Lock(wanted.owner, wanted.kind, start, end, wanted.pid, wanted.ofd))
        kept.sort(key=lambda lock: lock.start)
        if kept:
            self._locks[key] = kept
        else:
            self._locks.pop(key, None)

    @staticmethod
    def _touches(lock: Lock, start: int, end: int | None, wanted: Lock) -> bool:
        """Overlapping, or (same type, to be merged) adjacent."""
        if lock.overlaps(start, end):
            return True
        if wanted.kind == F_UNLCK or lock.kind != wanted.kind:
            return False
        return not _before(lock.end, start) and not _before(end, lock.start)

    def closed(self, table, file) -> None:
        """An fd of `file` closed in `table`: the table's POSIX locks on its inode go."""
        if self.holds(table):
            self.release(table, inode_key(file))

    def release(self, owner, key=None) -> None:
        """Drop the owner's locks (on one inode, or all: an fd table or description that
        closed, whose leases go too), waking whoever waits for them."""
        if self.leases and key is None:
            self.leases.closed(owner)
        changed = []
        for lock_key, locks in list(self._locks.items()):
            if key is not None and lock_key != key:
                continue
            kept = [lock for lock in locks if lock.owner is not owner]
            if len(kept) != len(locks):
                changed.append(lock_key)
                if kept:
                    self._locks[lock_key] = kept
                else:
                    del self._locks[lock_key]
        self._waiting.pop(owner, None)
        for lock_key in changed:
            self._wakeup(channel_of(lock_key))


def inode_key(file) -> tuple:
    """The inode an open file's locks are on: its (st_dev, st_ino)."""
    st = file.stat()
    return st.dev, st.ino


def channel_of(key) -> tuple:
    """What a waiter on an inode's locks sleeps on."""
    return ("locks", key)

