"""eventfd(2) (fs/eventfd.c): a 64-bit counter as a file, its own wait channel.

read takes the whole count (or 1 under EFD_SEMAPHORE) and sleeps, or fails with EAGAIN,
while it is 0; write adds and sleeps while the sum would pass 0xfffffffffffffffe. Both move
exactly 8 bytes (a shorter buffer is EINVAL); a write of 0xffffffffffffffff is EINVAL.
"""
import struct

from .. import errno as E
from ..blocking import WouldBlock
from ..errno import GuestErrno
from ..readiness import POLLIN, POLLOUT, POLLRDNORM, POLLWRNORM
from .constants import BLOCK_SIZE, O_NONBLOCK, O_RDWR
from .records import StatResult
from .unseekable import Unseekable

EFD_SEMAPHORE = 1
COUNT_MAX = 0xFFFFFFFFFFFFFFFE          # ULLONG_MAX - 1: the largest value the counter holds
ANON_INODE_DEV = 0x0e                   # st_dev of anon_inode files (one inode for them all)
ANON_INODE_INO = 1


class EventFd(Unseekable):
    is_tty = False

    def __init__(self, wakeup, count: int, *, semaphore: bool, nonblocking: bool):
        self._wakeup = wakeup
        self.count = count
        self.semaphore = semaphore
        self.flags = O_RDWR | (O_NONBLOCK if nonblocking else 0)
        self.path = self.proc_link = b"anon_inode:[eventfd]"
        self.closed = False
        self.generation = 0             # changes of the count (epoll's EPOLLET)

    @property
    def wait_channel(self) -> "EventFd":
        return self

    def _wait(self, what: str):
        if self.flags & O_NONBLOCK:
            raise GuestErrno(E.EAGAIN)
        raise WouldBlock(self, f"{what} on eventfd")

    def read(self, n: int) -> bytes:
        if n < 8:
            raise GuestErrno(E.EINVAL)
        if self.count == 0:
            self._wait("read")
        value = 1 if self.semaphore else self.count
        self.count -= value
        self.generation += 1
        self._wakeup(self)
        return struct.pack("<Q", value)

    def write(self, data: bytes) -> int:
        if len(data) < 8:
            raise GuestErrno(E.EINVAL)
        value = struct.unpack_from("<Q", data)[0]
        if value == 0xFFFFFFFFFFFFFFFF:
            raise GuestErrno(E.EINVAL)
        if COUNT_MAX - self.count < value:
            self._wait("write")
        self.count += value
        self.generation += 1
        if value:
            self._wakeup(self)
        return 8

    def signal(self) -> None:
        """eventfd_signal_mask (fs/eventfd.c), a kernel-side add of 1 (an AIO completion's
        IOCB_FLAG_RESFD): it never sleeps, and a counter at its maximum stays there."""
        if self.count < COUNT_MAX:
            self.count += 1
            self.generation += 1
            self._wakeup(self)

    def poll_events(self) -> int:
        mask = POLLIN | POLLRDNORM if self.count else 0
        return mask | (POLLOUT | POLLWRNORM if self.count < COUNT_MAX else 0)

    def available(self) -> int:
        return 8 if self.count else 0

    def stat(self) -> StatResult:
        return StatResult(ANON_INODE_DEV, ANON_INODE_INO, 0o600, 1, 0, 0, 0, 0, BLOCK_SIZE,
                          0, 0, 0, 0)

    def close(self) -> None:
        self.closed = True
