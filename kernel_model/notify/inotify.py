"""An inotify instance (fs/notify/inotify/inotify_user.c): a file whose reads return the
events of its watches as struct inotify_event records.

A watch is one per inode per instance, numbered from 1 (idr_alloc_cyclic), with the mask the
caller gave (IN_MASK_ADD ORs it in, IN_MASK_CREATE refuses an existing one: EEXIST). An event
is queued with its watch's number, its mask (with IN_ISDIR for a directory), the rename cookie
and the name of the child it is about, padded with NULs to a multiple of 16 bytes; an event
equal to the last one queued is merged into it (inotify_merge). IN_ONESHOT ends a watch after
its first event. A watch that ends (inotify_rm_watch, IN_ONESHOT, its inode deleted) queues
IN_IGNORED. The queue holds max_queued_events (16384, or what /proc/sys/fs/inotify's value
was when the instance was made); past it one IN_Q_OVERFLOW (wd -1)
stands for everything lost.

read: EINVAL when the buffer cannot hold the first event, else as many whole events as fit;
with none queued EAGAIN under IN_NONBLOCK, else the reader sleeps. FIONREAD gives the bytes
queued; poll says POLLIN while any is.
"""
import struct
from collections import deque

from .. import errno as E
from ..blocking import nothing_to_read
from ..errno import GuestErrno
from ..fs.constants import BLOCK_SIZE, O_NONBLOCK, O_RDONLY
from ..fs.fsnotify import IN_IGNORED, IN_Q_OVERFLOW
from ..fs.records import StatResult
from ..fs.unseekable import Unseekable
from ..readiness import POLLIN, POLLRDNORM

IN_ONESHOT = 0x80000000
IN_EXCL_UNLINK = 0x04000000
IN_ALL_EVENTS = 0xFFF
EVENT = struct.Struct("<iIII")           # wd, mask, cookie, len
MAX_QUEUED_EVENTS = 16384
ANON_INODE_DEV, ANON_INODE_INO = 0x0e, 1


def _record(wd: int, mask: int, cookie: int, name: bytes) -> bytes:
    padded = b""
    if name:
        size = (len(name) + 1 + EVENT.size - 1) // EVENT.size * EVENT.size
        padded = name.ljust(size, b"\0")
    return EVENT.pack(wd, mask, cookie, len(padded)) + padded


class Watch:
    def __init__(self, instance: "Inotify", wd: int, key, mask: int):
        self.instance, self.wd, self.key, self.mask = instance, wd, key, mask

    def deliver(self, mask: int, name: bytes, cookie: int, unlinked: bool = False,
                subject=None) -> None:
        """`unlinked`: the event came through a removed name (fs/notify/fsnotify.c
        fsnotify_handle_inode_event: IN_EXCL_UNLINK's watch does not hear it)."""
        if not mask & self.mask & 0xFFF or (unlinked and self.mask & IN_EXCL_UNLINK):
            return
        self.instance.queue_event(self.wd, mask, cookie, name)
        if self.mask & IN_ONESHOT:
            self.ended()

    def ended(self) -> None:
        self.instance.end_watch(self)


class Inotify(Unseekable):
    is_tty = False

    def __init__(self, fsnotify, wakeup, *, nonblocking: bool,
                 max_events: int = MAX_QUEUED_EVENTS):
        self._fsnotify = fsnotify
        self._max_events = max_events           # max_queued_events when made (inotify_new_group)
        self._wakeup = wakeup
        self.flags = O_RDONLY | (O_NONBLOCK if nonblocking else 0)
        self.path = self.proc_link = b"anon_inode:inotify"
        self.closed = False
        self.generation = 0                     # changes of the queue (epoll's EPOLLET)
        self._events: deque[tuple[int, int, int, bytes]] = deque()
        self._watches: dict[int, Watch] = {}
        self._by_key: dict = {}
        self._last_wd = 0

    @property
    def wait_channel(self) -> "Inotify":
        return self

    # --- watches ------------------------------------------------------------------------------
    def watch(self, key, mask: int, *, add: bool, create: bool) -> int:
        """inotify_update_watch / inotify_new_watch: the watch's number."""
        found = self._by_key.get(key)
        if found is not None:
            if create:
                raise GuestErrno(E.EEXIST)
            found.mask = found.mask | mask if add else mask
            return found.wd
        self._last_wd += 1
        watch = Watch(self, self._last_wd, key, mask)
        self._watches[watch.wd] = self._by_key[key] = watch
        self._fsnotify.add(key, watch)
        return watch.wd

    def remove_watch(self, wd: int) -> None:
        watch = self._watches.get(wd)
        if watch is None:
            raise GuestErrno(E.EINVAL)
        self.end_watch(watch)

    def end_watch(self, watch: Watch) -> None:
        if self._watches.pop(watch.wd, None) is None:
            return
        del self._by_key[watch.key]
        self._fsnotify.remove(watch.key, watch)
        self.queue_event(watch.wd, IN_IGNORED, 0, b"")

    # --- the queue ----------------------------------------------------------------------------
    def queue_event(self, wd: int, mask: int, cookie: int, name: bytes) -> None:
        event = (wd, mask, cookie, name)
        if self._events and self._events[-1] == event:
            return                                          # inotify_merge
        if len(self._events) >= self._max_events:
            overflow = (-1, IN_Q_OVERFLOW, 0, b"")
            if self._events[-1] != overflow:
                self._events.append(overflow)
            return
        self._events.append(event)
        self.generation += 1
        self._wakeup(self)

    def read(self, n: int) -> bytes:
        if not self._events:
            nothing_to_read(self, "inotify")
        out = bytearray()
        while self._events:
            record = _record(*self._events[0])
            if len(out) + len(record) > n:
                break
            out += record
            self._events.popleft()
        if not out:
            raise GuestErrno(E.EINVAL)                      # the buffer holds no whole event
        self.generation += 1
        return bytes(out)

    def write(self, data: bytes) -> int:
        raise GuestErrno(E.EINVAL)                          # inotify_fops has no write

    def available(self) -> int:
        return sum(len(_record(*event)) for event in self._events)

    def poll_events(self) -> int:
        return POLLIN | POLLRDNORM if self._events else 0

    def fdinfo_lines(self) -> bytes:
        """/proc/PID/fdinfo/N's line per watch (fs/notify/fdinfo.c inotify_fdinfo): the
        watched inode, its file system's kernel dev_t (MKDEV: major << 20 | minor), and the
        mask as inotify_mark_user_mask gives it, the events with IN_EXCL_UNLINK and
        IN_ONESHOT; the newest watch first, as the group's mark list is kept. (Linux adds the
        inode's file handle after ignored_mask where the file system can export one; the
        model has no name_to_handle_at to match it.)"""
        lines = []
        for wd, watch in sorted(self._watches.items(), reverse=True):
            dev, ino = watch.key
            sdev = ((dev >> 8) & 0xFFF) << 20 | (dev & 0xFF) | ((dev >> 12) & 0xFFF00)
            mask = watch.mask & (IN_ALL_EVENTS | IN_EXCL_UNLINK | IN_ONESHOT)
            lines.append(b"inotify wd:%x ino:%x sdev:%x mask:%x ignored_mask:0\n"
                         % (wd, ino, sdev, mask))
        return b"".join(lines)

    def stat(self) -> StatResult:
        return StatResult(ANON_INODE_DEV, ANON_INODE_INO, 0o600, 1, 0, 0, 0, 0, BLOCK_SIZE,
                          0, 0, 0, 0)

    def close(self) -> None:
        """The instance goes: its watches end with it (no IN_IGNORED is read any more)."""
        for watch in list(self._watches.values()):
            self._fsnotify.remove(watch.key, watch)
        self._watches.clear()
        self._by_key.clear()
        self.closed = True
