"""An epoll instance (fs/eventpoll.c) as a file: an interest list of (fd, open file) items.

Readiness is asked of each watched file when epoll_wait looks (file_events, the same answer
poll gets), so level-triggered items need no callbacks. The ready items found are reported in
interest-list order and then moved to its end, as Linux puts a level-triggered item back at
the tail of its ready list: with maxevents smaller than what is ready every item gets its turn.

EPOLLONESHOT disables an item once reported until EPOLL_CTL_MOD. EPOLLET reports an item, as
Linux reports on each wakeup of the file, when its file changed since the last report: files
that count their changes (`generation`: sockets, eventfds) say so; for the others (pipes) a
readiness bit that was not set at the last report stands for the change.

An item goes when its file's last descriptor closes (eventpoll_release); closing the fd alone
while a dup keeps the file open leaves it, as on Linux.
"""
from dataclasses import dataclass

from .. import errno as E
from ..errno import GuestErrno
from ..readiness import POLLERR, POLLHUP, POLLIN, POLLRDNORM, file_events, wait_channels
from .constants import BLOCK_SIZE, O_RDWR
from .eventfd import ANON_INODE_DEV, ANON_INODE_INO
from .records import StatResult
from .unseekable import Unseekable

EPOLLEXCLUSIVE = 1 << 28
EPOLLWAKEUP = 1 << 29
EPOLLONESHOT = 1 << 30
EPOLLET = 1 << 31
EP_PRIVATE_BITS = EPOLLWAKEUP | EPOLLONESHOT | EPOLLET | EPOLLEXCLUSIVE
EP_MAX_NESTS = 4                        # fs/eventpoll.c: epoll instances inside each other


@dataclass
class Item:
    fd: int
    file: object
    events: int
    data: int
    reported: int = 0                   # EPOLLET: the bits of the last report still set
    generation: object = None           # EPOLLET: the file's change count at the last report


class Epoll(Unseekable):
    is_tty = False

    def __init__(self):
        self.items: dict[tuple[int, int], Item] = {}
        self.flags = O_RDWR
        self.path = self.proc_link = b"anon_inode:[eventpoll]"
        self.closed = False

    # ---- epoll_ctl ----------------------------------------------------------------------------
    def add(self, fd: int, file, events: int, data: int) -> None:
        key = (fd, id(file))
        if key in self.items:
            raise GuestErrno(E.EEXIST)
        if file is self or _watches(file, self):
            raise GuestErrno(E.ELOOP)       # ep_loop_check: no epoll may watch itself
        if isinstance(file, Epoll) and _depth(file) + 1 > EP_MAX_NESTS:
            raise GuestErrno(E.EINVAL)      # nested deeper than the kernel follows
        self.items[key] = Item(fd, file, events, data)

    def modify(self, fd: int, file, events: int, data: int) -> None:
        item = self._item(fd, file)
        item.events, item.data, item.reported, item.generation = events, data, 0, None

    def delete(self, fd: int, file) -> None:
        self._item(fd, file)
        del self.items[(fd, id(file))]

    def _item(self, fd: int, file) -> Item:
        item = self.items.get((fd, id(file)))
        if item is None:
            raise GuestErrno(E.ENOENT)
        return item

    # ---- epoll_wait ---------------------------------------------------------------------------
    def harvest(self, maxevents: int) -> list[tuple[int, int]]:
        """(events, data) of up to `maxevents` ready items; reported items move to the end."""
        self._forget_closed()
        found: list[Item] = []
        for item in list(self.items.values()):
            if len(found) >= maxevents:
                break
            revents = self._revents(item)
            if revents:
                found.append((item, revents))
        for item, revents in found:
            if item.events & EPOLLONESHOT:
                item.events &= EP_PRIVATE_BITS
            if item.events & EPOLLET:
                item.reported |= revents
                item.generation = getattr(item.file, "generation", None)
            key = (item.fd, id(item.file))
            self.items[key] = self.items.pop(key)
        return [(revents, item.data) for item, revents in found]

    def _revents(self, item: Item) -> int:
        wanted = item.events & ~EP_PRIVATE_BITS
        if not wanted and item.events & EPOLLONESHOT:
            return 0                         # disabled until EPOLL_CTL_MOD
        revents = file_events(item.file) & (wanted | POLLERR | POLLHUP)
        if item.events & EPOLLET:
            item.reported &= revents
            changed = getattr(item.file, "generation", None) != item.generation
            return revents if changed or revents & ~item.reported else 0
        return revents

    def _forget_closed(self) -> None:
        for key in [k for k, item in self.items.items() if getattr(item.file, "closed", False)]:
            del self.items[key]

    # ---- the epoll fd as a file ---------------------------------------------------------------
    def wait_channels(self) -> list:
        channels = []
        for item in self.items.values():
            for channel in wait_channels(item.file):
                if channel not in channels:
                    channels.append(channel)
        return channels

    def poll_events(self) -> int:
        """ep_eventpoll_poll(): readable while an item is ready (without consuming a report)."""
        self._forget_closed()
        ready = any(file_events(i.file) & (i.events & ~EP_PRIVATE_BITS | POLLERR | POLLHUP)
                    for i in self.items.values() if i.events & ~EP_PRIVATE_BITS)
        return POLLIN | POLLRDNORM if ready else 0

    def read(self, n: int) -> bytes:
        raise GuestErrno(E.EINVAL)

    def write(self, data: bytes) -> int:
        raise GuestErrno(E.EINVAL)

    def stat(self) -> StatResult:
        return StatResult(ANON_INODE_DEV, ANON_INODE_INO, 0o600, 1, 0, 0, 0, 0, BLOCK_SIZE,
                          0, 0, 0, 0)

    def close(self) -> None:
        self.closed = True
        self.items.clear()


def _watches(file, target: Epoll, depth: int = 0) -> bool:
    """Whether epoll `file` watches `target`, directly or through nested epolls."""
    if not isinstance(file, Epoll) or depth > 5:
        return False
    return any(i.file is target or _watches(i.file, target, depth + 1) for i in file.items.values())


def _depth(ep: Epoll, seen: int = 0) -> int:
    """How many epoll instances lie below `ep` along its longest chain of nested ones."""
    if seen > EP_MAX_NESTS:
        return seen
    return max((1 + _depth(i.file, seen + 1) for i in ep.items.values()
                if isinstance(i.file, Epoll)), default=0)
