"""A fanotify group (fs/notify/fanotify/fanotify.c and fanotify_user.c): a file whose reads
return struct fanotify_event_metadata records, each with a new fd open on the file the event
is about, over the file system's event registry (fs/fsnotify.py).

The model's groups report file descriptors (no FAN_REPORT_FID mode): a mark on an inode asks
for the path events (access, modify, close, open) of that inode, of its children too with
FAN_EVENT_ON_CHILD on a directory, and of a directory itself only with FAN_ONDIR; its
ignored mask holds events back (cleared by a modify unless FAN_MARK_IGNORED_SURV_MODIFY). An
event is about an open file description (the one read, written, closed or opened): events not
tied to one (an attribute change, a name created) carry no path, and a group without FID
reporting never hears them (fanotify_group_event_mask). The event's pid is the causing
task's tgid, its tid with FAN_REPORT_TID. A new event merges into a queued one about the same
file by the same task (fanotify_merge: the masks ORed). The queue holds 16384 events (past it
one FAN_Q_OVERFLOW, unless FAN_UNLIMITED_QUEUE).

read: as many whole events as fit, each event's fd made as it is read (dentry_open with the
group's event_f_flags and no notification of its own; EINVAL when the first does not fit;
EAGAIN under FAN_NONBLOCK, else the reader sleeps). Permission events (notify/fanotify_perm.py)
move to the group's list of events awaiting a response, which a write of struct
fanotify_response {fd, response} gives (ENOENT for no such fd, EINVAL for a bad answer);
closing the group allows every pending one (fanotify_release).
"""
import struct
from collections import deque
from dataclasses import dataclass

from .. import errno as E
from ..blocking import nothing_to_read
from ..errno import GuestErrno
from ..fs.constants import BLOCK_SIZE, O_CLOEXEC, O_NONBLOCK, O_RDWR
from ..fs.fsnotify import IN_ISDIR, inode_key
from ..fs.openfile import OpenFile
from ..fs.records import StatResult
from ..fs.unseekable import Unseekable
from ..readiness import POLLIN, POLLRDNORM
from .fanotify_perm import FAN_ALLOW, FAN_DENY, PERM_EVENTS, PermEvent

FAN_MODIFY, FAN_Q_OVERFLOW = 0x2, 0x4000
FAN_EVENT_ON_CHILD, FAN_ONDIR = 0x08000000, 0x40000000
EVENT_FLAGS = FAN_EVENT_ON_CHILD | FAN_ONDIR
PATH_EVENTS = 0x1 | 0x2 | 0x8 | 0x10 | 0x20 | 0x1000     # access, modify, close, open, exec
FAN_NOFD = -1
METADATA = struct.Struct("<IBBHQii")     # event_len, vers, reserved, metadata_len, mask, fd, pid
METADATA_VERSION = 3
MAX_QUEUED_EVENTS = 16384
ANON_INODE_DEV, ANON_INODE_INO = 0x0e, 1


@dataclass
class Event:
    mask: int
    pid: int
    file: object | None                  # the description whose path the event's fd opens
    key: tuple | None = None             # the inode's (st_dev, st_ino), for merging
    perm: PermEvent | None = None


@dataclass(eq=False)
class Mark:
    """An inode mark of one group (struct fsnotify_mark with fanotify's masks)."""
    group: "Fanotify"
    key: tuple
    is_dir: bool
    mask: int = 0
    ignored: int = 0
    survives_modify: bool = False

    def deliver(self, mask: int, name: bytes, cookie: int, unlinked: bool = False,
                subject=None) -> None:
        if subject is not None and getattr(subject, "node", None) is not None:
            self.group.handle(mask, subject)       # no path: only FID groups would hear it

    def ended(self) -> None:
        """The inode was deleted: the mark goes with it."""
        self.group.remove_mark(self)


class Fanotify(Unseekable):
    is_tty = False

    def __init__(self, fsnotify, wakeup, current, *, nonblocking: bool, event_flags: int,
                 report_tid: bool, unlimited_queue: bool, permissions: bool):
        """`current`: the running thread (whose process reads, and whose task causes events)."""
        self._fsnotify, self._wakeup, self._current = fsnotify, wakeup, current
        self.flags = O_RDWR | (O_NONBLOCK if nonblocking else 0)
        self.event_flags = event_flags
        self.report_tid, self.unlimited_queue = report_tid, unlimited_queue
        self.permissions = permissions           # FAN_CLASS_CONTENT or PRE_CONTENT
        self.path = self.proc_link = b"anon_inode:[fanotify]"
        self.closed = False
        self.generation = 0
        self.marks: dict[tuple, Mark] = {}
        self._events: deque[Event] = deque()
        self._awaiting: dict[int, PermEvent] = {}     # fd given to the listener -> event

    @property
    def wait_channel(self) -> "Fanotify":
        return self

    # --- marks --------------------------------------------------------------------------------
    def add_mark(self, key, is_dir: bool, mask: int, ignored: bool, survives: bool) -> None:
        mark = self.marks.get(key)
        if mark is None:
            mark = self.marks[key] = Mark(self, key, is_dir)
            self._fsnotify.add(key, mark)
        if ignored:
            mark.ignored |= mask
            mark.survives_modify = mark.survives_modify or survives
        else:
            mark.mask |= mask
        self._fsnotify.perm_marks_changed(mark, bool(mark.mask & PERM_EVENTS))

    def remove_from_mark(self, key, mask: int, ignored: bool) -> None:
        mark = self.marks.get(key)
        if mark is None:
            raise GuestErrno(E.ENOENT)
        if ignored:
            mark.ignored &= ~mask
        else:
            mark.mask &= ~mask
        if not mark.mask and not mark.ignored:
            self.remove_mark(mark)
        else:
            self._fsnotify.perm_marks_changed(mark, bool(mark.mask & PERM_EVENTS))

    def remove_mark(self, mark: Mark) -> None:
        if self.marks.pop(mark.key, None) is not None:
            self._fsnotify.remove(mark.key, mark)
            self._fsnotify.perm_marks_changed(mark, False)

    def flush(self) -> None:
        for mark in list(self.marks.values()):
            self.remove_mark(mark)

    # --- which events ------------------------------------------------------------------------
    def handle(self, mask: int, subject) -> None:
        wanted = self.wants(mask, subject)
        if wanted:
            self.queue_event(wanted, subject)

    def wants(self, mask: int, subject) -> int:
        """fanotify_group_event_mask(): the events of `mask` about `subject` the group's marks
        ask for, together: the inode's mark, and its directory's when that asks for its
        children's events; minus what either's ignored mask holds back. A directory's own
        events need FAN_ONDIR. A modify first clears the ignored masks that do not survive it
        (send_to_group)."""
        key = inode_key(subject.node)
        marks = [self.marks.get(key)]
        parent = self.marks.get(subject.notify_parent) if subject.notify_parent != key else None
        if parent is not None and parent.mask & FAN_EVENT_ON_CHILD:
            marks.append(parent)
        wanted = ignored = 0
        for mark in marks:
            if mark is None:
                continue
            if mask & FAN_MODIFY and not mark.survives_modify:
                mark.ignored = 0
            wanted, ignored = wanted | mark.mask, ignored | mark.ignored
        if mask & IN_ISDIR and not wanted & FAN_ONDIR:
            return 0
        return mask & wanted & ~ignored & ~EVENT_FLAGS

    # --- the queue ----------------------------------------------------------------------------
    def task_pid(self) -> int:
        thread = self._current()
        if thread is None:
            return 0
        return thread.tid if self.report_tid else thread.process.pid

    def queue_event(self, mask: int, subject, perm: PermEvent | None = None) -> None:
        key = inode_key(subject.node)
        pid = self.task_pid()
        if perm is None:
            for old in self._events:                    # fanotify_merge
                if old.perm is None and old.key == key and old.pid == pid:
                    old.mask |= mask
                    return
        if len(self._events) >= MAX_QUEUED_EVENTS and not self.unlimited_queue and perm is None:
            if self._events[-1].mask != FAN_Q_OVERFLOW:
                self._events.append(Event(FAN_Q_OVERFLOW, 0, None))
            return
        self._events.append(Event(mask & ~IN_ISDIR, pid, subject, key, perm))
        self.generation += 1
        self._wakeup(self)

    def read(self, n: int) -> bytes:
        if not self._events:
            nothing_to_read(self, "fanotify")
        out = bytearray()
        while self._events and len(out) + METADATA.size <= n:
            event = self._events.popleft()
            try:
                fd = self._event_fd(event)
            except GuestErrno:
                if not out:
                    raise                               # EMFILE and the like: nothing read
                self._events.appendleft(event)
                break
            out += METADATA.pack(METADATA.size, METADATA_VERSION, 0, METADATA.size, event.mask,
                                 fd, event.pid)
            if event.perm is not None:
                if fd == FAN_NOFD:
                    event.perm.answer(FAN_ALLOW)
                else:
                    self._awaiting[fd] = event.perm
        if not out:
            raise GuestErrno(E.EINVAL)
        self.generation += 1
        return bytes(out)

    def _event_fd(self, event: Event) -> int:
        """create_fd(): a description of the event's file with the group's flags; no event of
        its own (FMODE_NONOTIFY)."""
        source = event.file
        if source is None:
            return FAN_NOFD
        node = source.node
        flags = self.event_flags
        handle = node.open_handle(flags) if node.is_regular else None
        f = OpenFile(source.path, flags & ~O_CLOEXEC, node.pin() if node.is_dir else node,
                     handle, getattr(source, "_listing", None))
        return self._current().process.fds.install(f, cloexec=bool(flags & O_CLOEXEC))

    def write(self, data: bytes) -> int:
        """process_access_response(): struct fanotify_response {__s32 fd; __u32 response}."""
        if len(data) < 8:
            raise GuestErrno(E.EINVAL)
        fd, response = struct.unpack("<iI", data[:8])
        if response not in (FAN_ALLOW, FAN_DENY) or fd < 0:
            raise GuestErrno(E.EINVAL)
        perm = self._awaiting.pop(fd, None)
        if perm is None:
            raise GuestErrno(E.ENOENT)
        perm.answer(response)
        return 8

    def available(self) -> int:
        return len(self._events) * METADATA.size

    def poll_events(self) -> int:
        return POLLIN | POLLRDNORM if self._events else 0

    def stat(self) -> StatResult:
        return StatResult(ANON_INODE_DEV, ANON_INODE_INO, 0o600, 1, 0, 0, 0, 0, BLOCK_SIZE,
                          0, 0, 0, 0)

    def close(self) -> None:
        """fanotify_release(): the marks go, and every permission event not answered yet is
        allowed."""
        self.flush()
        for perm in list(self._awaiting.values()):
            perm.answer(FAN_ALLOW)
        for event in self._events:
            if event.perm is not None:
                event.perm.answer(FAN_ALLOW)
        self._awaiting.clear()
        self._events.clear()
        self.closed = True
