"""An io_uring instance as an open file (struct io_ring_ctx): its rings in shared pages that
mmap maps (io_uring_mmap: the offset picks the region), the buffers io_uring_register
registered, and the moving of the ring indexes: the kernel owns the SQ head and the CQ tail,
user space the SQ tail and the CQ head."""
import struct

from emu.shared_pages import SharedPages

from .. import errno as E
from ..errno import GuestErrno
from ..fs.constants import BLOCK_SIZE, O_RDWR
from ..fs.eventfd import ANON_INODE_DEV, ANON_INODE_INO
from ..fs.records import StatResult
from ..fs.unseekable import Unseekable
from ..memory.layout import PAGE
from .abi import (CACHE_LINE, CQ_ENTRIES, CQ_HEAD, CQ_MASK, CQ_OVERFLOW, CQ_TAIL, CQE, CQES,
                  IORING_OFF_CQ_RING, IORING_OFF_SQ_RING, IORING_OFF_SQES, SQ_ENTRIES, SQ_HEAD,
                  SQ_MASK, SQ_TAIL, SQE)


def _pages(size: int) -> int:
    return -(-size // PAGE) * PAGE


class IoRing(Unseekable):
    is_tty = False
    readable = writable = True              # FMODE_READ | FMODE_WRITE: mmap may share it RW

    def __init__(self, wakeup, sq_entries: int, cq_entries: int):
        self._wakeup = wakeup
        self.flags = O_RDWR
        self.path = self.proc_link = b"anon_inode:[io_uring]"
        self.closed = False
        self.sq_entries, self.cq_entries = sq_entries, cq_entries
        # rings_size: the CQEs after the indexes, the SQ array on the next cache line
        self.sq_array = -(-(CQES + CQE.size * cq_entries) // CACHE_LINE) * CACHE_LINE
        self.rings = SharedPages(_pages(self.sq_array + 4 * sq_entries))
        self.sqes = SharedPages(_pages(SQE.size * sq_entries))
        for pages in (self.rings, self.sqes):
            pages.hold()                    # the kernel's own reference, until the close
        self.buffers: list[tuple[int, int]] | None = None     # IORING_REGISTER_BUFFERS
        self.pending: list = []             # requests whose file would sleep (ops.Pending)
        for offset, value in ((SQ_MASK, sq_entries - 1), (CQ_MASK, cq_entries - 1),
                              (SQ_ENTRIES, sq_entries), (CQ_ENTRIES, cq_entries)):
            self._put(offset, value)

    @property
    def wait_channel(self) -> "IoRing":
        return self

    def _get(self, offset: int) -> int:
        return struct.unpack("<I", self.rings.read(offset, 4))[0]

    def _put(self, offset: int, value: int) -> None:
        self.rings.write(offset, struct.pack("<I", value & 0xFFFFFFFF))

    # ---- mmap ------------------------------------------------------------------------------
    def mmap_backing(self, offset: int, size: int) -> list:
        """io_uring_mmap / io_uring_validate_mmap_request: the region the offset names (the
        SQ and CQ rings are one region), no larger than it (EINVAL)."""
        if offset in (IORING_OFF_SQ_RING, IORING_OFF_CQ_RING):
            pages = self.rings
        elif offset == IORING_OFF_SQES:
            pages = self.sqes
        else:
            raise GuestErrno(E.EINVAL)
        if size > pages.size:
            raise GuestErrno(E.EINVAL)
        return [(pages, 0, size)]

    # ---- the rings -------------------------------------------------------------------------
    def pending_sqes(self) -> int:
        """Entries user space has queued and the kernel not consumed (tail - head)."""
        return (self._get(SQ_TAIL) - self._get(SQ_HEAD)) & 0xFFFFFFFF

    def next_sqe(self) -> tuple | None:
        """The SQE at the SQ head, through the SQ array, the head moved past it; None when
        the array names an entry past the ring (io_get_sqe: dropped, sq_dropped counted)."""
        head = self._get(SQ_HEAD)
        index = self._get(self.sq_array + 4 * (head & (self.sq_entries - 1)))
        self._put(SQ_HEAD, head + 1)
        if index >= self.sq_entries:
            return None
        return SQE.unpack(self.sqes.read(index * SQE.size, SQE.size))

    def ready_cqes(self) -> int:
        return (self._get(CQ_TAIL) - self._get(CQ_HEAD)) & 0xFFFFFFFF

    def post(self, user_data: int, res: int) -> None:
        """io_fill_cqe: at the CQ tail, or counted in cq_overflow when the ring is full (the
        model keeps no overflow list)."""
        tail = self._get(CQ_TAIL)
        if self.ready_cqes() >= self.cq_entries:
            self._put(CQ_OVERFLOW, self._get(CQ_OVERFLOW) + 1)
            return
        at = CQES + CQE.size * (tail & (self.cq_entries - 1))
        self.rings.write(at, CQE.pack(user_data & (1 << 64) - 1, res, 0))
        self._put(CQ_TAIL, tail + 1)
        self._wakeup(self)

    # ---- the file --------------------------------------------------------------------------
    def read(self, n: int) -> bytes:
        raise GuestErrno(E.EINVAL)          # io_uring_fops has no read

    def write(self, data: bytes) -> int:
        raise GuestErrno(E.EINVAL)

    def poll_events(self) -> int:
        return 0x41 if self.ready_cqes() else 0     # io_uring_poll: POLLIN | POLLRDNORM

    def stat(self) -> StatResult:
        return StatResult(ANON_INODE_DEV, ANON_INODE_INO, 0o600, 1, 0, 0, 0, 0, BLOCK_SIZE,
                          0, 0, 0, 0)

    def close(self) -> None:
        """io_ring_ctx_free: the kernel lets go of the rings (mappings keep them)."""
        if not self.closed:
            self.closed = True
            self.rings.drop()
            self.sqes.drop()
