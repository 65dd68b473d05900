"""A userfaultfd (fs/userfaultfd.c struct userfaultfd_ctx) as an open file: the address space
it serves, the API handshake's features, its registered ranges, the messages of faults not
read yet, and the faults not resolved yet (their threads sleep on `fault_channel`).
"""
from .. import errno as E
from ..blocking import nothing_to_read
from ..errno import GuestErrno
from ..fs.constants import BLOCK_SIZE, O_NONBLOCK, O_RDONLY
from ..fs.eventfd import ANON_INODE_DEV, ANON_INODE_INO
from ..fs.records import StatResult
from ..fs.unseekable import Unseekable
from ..memory.layout import PAGE
from ..readiness import POLLERR, POLLIN, POLLRDNORM
from .abi import MSG, UFFD_EVENT_PAGEFAULT, UFFD_FEATURE_EXACT_ADDRESS, UFFD_FEATURE_THREAD_ID
from .registration import Registration, fill_missing, unprotect  # noqa: F401  (their home)


class UserfaultCtx(Unseekable):
    is_tty = False

    def __init__(self, kernel, space, *, nonblocking: bool):
        self._kernel = kernel
        self.space = space                  # ctx->mm: the faults of this address space
        self.flags = O_RDONLY | (O_NONBLOCK if nonblocking else 0)
        self.path = self.proc_link = b"anon_inode:[userfaultfd]"
        self.closed = False
        self.features: int | None = None    # None until UFFDIO_API (UFFD_FEATURE_INITIALIZED)
        self.ranges: list[Registration] = []
        self.messages: list[bytes] = []     # fault_pending_wqh: queued, not read
        self.faulting: dict[int, int] = {}  # tid -> page of its fault not resolved yet
        self.generation = 0

    @property
    def wait_channel(self) -> "UserfaultCtx":
        return self

    def fault_channel(self, page: int) -> tuple:
        """What a thread whose fault at `page` waits on (fault_wqh, keyed by the address)."""
        return ("userfault", id(self), page)

    def registration_at(self, address: int) -> Registration | None:
        for reg in self.ranges:
            if reg.start <= address < reg.end:
                return reg
        return None

    # ---- faults ----------------------------------------------------------------------------
    def queue_fault(self, thread, address: int, flags: int) -> None:
        """handle_userfault: one message per fault (a thread whose fault is still queued or
        being handled sleeps again without a second), then the thread sleeps until a wake of
        its page."""
        page = self.post_fault(thread, address, flags)
        self._kernel.scheduler.sleep(thread, [self.fault_channel(page)],
                                     f"userfaultfd fault at {address:#x}", None)

    def post_fault(self, thread, address: int, flags: int) -> int:
        """The fault's message, unless this thread's fault there is queued already; its page."""
        page = address & ~(PAGE - 1)
        if self.faulting.get(thread.tid) != page:
            self.faulting[thread.tid] = page
            exact = self.features & UFFD_FEATURE_EXACT_ADDRESS
            tid = thread.tid if self.features & UFFD_FEATURE_THREAD_ID else 0
            self.messages.append(MSG.pack(UFFD_EVENT_PAGEFAULT, 0, 0, 0, flags,
                                          address if exact else page, tid))
            self.generation += 1
            self._kernel.wakeup(self)
        return page

    def wake(self, start: int, end: int) -> None:
        """wake_userfault: the threads faulting on a page of [start, end) run again (the
        instruction is retried; one whose page is still missing faults anew)."""
        for tid, page in list(self.faulting.items()):
            if start <= page < end:
                del self.faulting[tid]
                self._kernel.wakeup(self.fault_channel(page))

    # ---- the file --------------------------------------------------------------------------
    def read(self, n: int) -> bytes:
        """userfaultfd_read: EINVAL before the handshake or for a buffer smaller than a
        message; as many whole messages as fit, sleeping (EAGAIN under O_NONBLOCK) for one."""
        if self.features is None or n < MSG.size:
            raise GuestErrno(E.EINVAL)
        if not self.messages:
            nothing_to_read(self, "userfaultfd")
        count = min(len(self.messages), n // MSG.size)
        out, self.messages = self.messages[:count], self.messages[count:]
        self.generation += 1
        return b"".join(out)

    def write(self, data: bytes) -> int:
        raise GuestErrno(E.EBADF)           # opened O_RDONLY, and userfaultfd_fops has no write

    def ioctl(self, ctx, request: int, arg: int) -> int:
        from .ioctl import uffd_ioctl          # (ioctl.py imports this module)
        return uffd_ioctl(ctx, self, request, arg)

    def poll_events(self) -> int:
        """userfaultfd_poll: POLLERR before the handshake, POLLIN with a message to read."""
        if self.features is None:
            return POLLERR
        return POLLIN | POLLRDNORM if self.messages else 0

    def available(self) -> int:
        return len(self.messages) * MSG.size

    def stat(self) -> StatResult:
        return StatResult(ANON_INODE_DEV, ANON_INODE_INO, 0o600, 1, 0, 0, 0, 0, BLOCK_SIZE,
                          0, 0, 0, 0)

    def close(self) -> None:
        """userfaultfd_release: the ranges are unregistered (their missing pages are zero
        pages again at the next fault), protected pages writable, every faulting thread
        woken to retry."""
        self.closed = True
        for reg in self.ranges:
            unprotect(self.space, reg, reg.start, reg.end)
            fill_missing(self.space, reg.start, reg.end)
        self.ranges.clear()
        self.wake(0, 1 << 64)
        self.messages.clear()
        registered = getattr(self.space, "userfaults", None)
        if registered is not None and self in registered:
            registered.remove(self)
