"""One AIO context (fs/aio.c struct kioctx): its ring of completion events, mapped shared into
the process at the context's address (aio_setup_ring), and the requests still in flight.

The kernel writes the ring through its own reference to the pages (Linux's ring_pages), so a
completion lands even if the process has unmapped or protected its view; it reads back only
`head`, which user space may advance itself (libaio reaps events from the ring without a call).
"""
from dataclasses import dataclass

from emu.shared_pages import SharedPages

from ..cpu.cpus import NR_CPUS
from ..memory.layout import PAGE
from ..readiness import file_events, wait_channels
from .abi import (AIO_RING, AIO_RING_COMPAT_FEATURES, AIO_RING_INCOMPAT_FEATURES, AIO_RING_MAGIC,
                  IO_EVENT, RING_HEAD_OFFSET, RING_TAIL_OFFSET)

# ioctx_alloc: a request count past this many io_events' worth of 256 MiB is EINVAL
MAX_RING_EVENTS = 0x10000000 // IO_EVENT.size


def doubled_request(nr_events: int) -> int:
    """ioctx_alloc's count: max(nr_events, num_possible_cpus() * 4) doubled (half the slots
    may sit in other CPUs' counters), as an unsigned int, so it may wrap to 0."""
    return (max(nr_events, NR_CPUS * 4) * 2) & 0xFFFFFFFF


def ring_events(doubled: int) -> int:
    """The ring's size in events (aio_setup_ring): 2 more for the head/tail overlap, then
    as many as the whole pages that takes hold."""
    pages = -(-(AIO_RING.size + IO_EVENT.size * (doubled + 2)) // PAGE)
    return (pages * PAGE - AIO_RING.size) // IO_EVENT.size


@dataclass
class PendingPoll:
    """An IOCB_CMD_POLL whose file was not ready when it was submitted (aio_poll)."""
    obj: int              # the user's iocb address: io_event.obj, and io_cancel's key
    data: int             # aio_data
    file: object
    events: int           # what it waits for, POLLERR and POLLHUP always included
    eventfd: object       # IOCB_FLAG_RESFD's eventfd, or None


class KioCtx:
    def __init__(self, nr_events: int, max_reqs: int, wakeup):
        self.nr_events = nr_events            # the trusted copy (ring->nr is the user's)
        self.max_reqs = max_reqs              # what io_setup asked: counted in fs.aio-nr
        self.mmap_size = -(-(AIO_RING.size + IO_EVENT.size * nr_events) // PAGE) * PAGE
        self.pages = SharedPages(self.mmap_size)
        self.pages.hold()                     # the kernel's own reference (ring_pages)
        self.user_id = 0                      # the ring's address: the aio_context_t
        self.id = 0                           # its slot in the address space's table
        self.tail = 0
        self.dead = False
        self.pending: list[PendingPoll] = []
        self._wakeup = wakeup

    @property
    def wait_channel(self) -> "KioCtx":
        return self

    def write_header(self) -> None:
        self.pages.write(0, AIO_RING.pack(self.id, self.nr_events, 0, 0, AIO_RING_MAGIC,
                                          AIO_RING_COMPAT_FEATURES, AIO_RING_INCOMPAT_FEATURES,
                                          AIO_RING.size))

    def _head(self) -> int:
        return int.from_bytes(self.pages.read(RING_HEAD_OFFSET, 4), "little") % self.nr_events

    def in_ring(self) -> int:
        """Completed events not reaped yet."""
        return (self.tail - self._head()) % self.nr_events

    def has_room(self) -> bool:
        """aio_get_req: a request needs a slot of reqs_available (nr_events - 1 at first),
        taken until its event is reaped."""
        return self.in_ring() + len(self.pending) < self.nr_events - 1

    def complete(self, obj: int, data: int, res: int, eventfd=None) -> None:
        """aio_complete: the event at the tail, the tail moved on, then the eventfd signalled
        and the waiters in io_getevents woken."""
        at = AIO_RING.size + self.tail * IO_EVENT.size
        self.pages.write(at, IO_EVENT.pack(data, obj, res, 0))
        self.tail = (self.tail + 1) % self.nr_events
        self.pages.write(RING_TAIL_OFFSET, self.tail.to_bytes(4, "little"))
        if eventfd is not None:
            eventfd.signal()
        self._wakeup(self)

    def take_events(self, limit: int) -> list[bytes]:
        """aio_read_events_ring: up to `limit` events from the head, the head moved past them."""
        head, events = self._head(), []
        while head != self.tail and len(events) < limit:
            events.append(self.pages.read(AIO_RING.size + head * IO_EVENT.size, IO_EVENT.size))
            head = (head + 1) % self.nr_events
        self.pages.write(RING_HEAD_OFFSET, head.to_bytes(4, "little"))
        return events

    def poll_pending(self) -> None:
        """Complete the pending polls whose file is ready now. aio_poll_wake completes one
        with the wake-up's key, the whole mask the file announced (a pipe's writer wakes with
        POLLIN | POLLRDNORM), not only the events asked for; the file's mask now stands for it."""
        for req in list(self.pending):
            mask = file_events(req.file)
            if mask & req.events:
                self.pending.remove(req)
                self.complete(req.obj, req.data, mask, req.eventfd)

    def cancel(self, obj: int) -> bool:
        """aio_poll_cancel for the request of iocb `obj`: it completes with what its file
        holds now (aio_poll_complete_work, cancelled); False when no such request waits."""
        for req in self.pending:
            if req.obj == obj:
                self.pending.remove(req)
                self.complete(req.obj, req.data, file_events(req.file) & req.events, req.eventfd)
                return True
        return False

    def channels(self) -> list:
        """What a waiter in io_getevents sleeps on: the context and its pending polls' files."""
        out = [self]
        for req in self.pending:
            out.extend(c for c in wait_channels(req.file) if c not in out)
        return out

    def release(self) -> None:
        """The kernel's reference to the ring goes (free_ioctx): the pages go with the last
        mapping of them."""
        if not self.dead:
            self.dead = True
            self.pending.clear()
            self._wakeup(self)
            self.pages.drop()
