"""timerfd (fs/timerfd.c): a timer read as a file. Each read takes the number of expirations
since the last one (a u64, at least 8 bytes asked, else EINVAL), sleeping — or EAGAIN under
O_NONBLOCK — while there are none. The kernel's TimerFds (time/timerfd_timers.py) counts the
expirations when the virtual clock reaches a deadline and wakes the readers and pollers."""
import struct

from .. import errno as E
from ..blocking import nothing_to_read
from ..errno import GuestErrno
from ..readiness import POLLIN, POLLRDNORM
from .constants import BLOCK_SIZE, O_NONBLOCK, O_RDWR
from .eventfd import ANON_INODE_DEV, ANON_INODE_INO
from .records import StatResult
from .unseekable import Unseekable


class TimerFd(Unseekable):
    is_tty = False

    def __init__(self, wakeup, clock: int, *, nonblocking: bool):
        self._wakeup = wakeup
        self.clock = clock
        self.flags = O_RDWR | (O_NONBLOCK if nonblocking else 0)
        self.path = self.proc_link = b"anon_inode:[timerfd]"
        self.closed = False
        self.deadline: int | None = None     # CLOCK_MONOTONIC virtual ns; None: disarmed
        self.interval = 0
        self.ticks = 0                       # expirations not read yet
        self.generation = 0                  # changes of the ticks (epoll's EPOLLET)

    @property
    def wait_channel(self) -> "TimerFd":
        return self

    def set(self, deadline: int | None, interval: int) -> None:
        """timerfd_settime: a new setting; the expirations not read are dropped."""
        self.deadline, self.interval, self.ticks = deadline, interval, 0

    def expire(self, now: int) -> None:
        """The clock is at `now`: count the expirations due (timerfd_tmrproc, hrtimer_forward)."""
        if self.deadline is None or self.deadline > now:
            return
        missed = (now - self.deadline) // self.interval if self.interval else 0
        self.ticks += 1 + missed
        self.deadline = self.deadline + self.interval * (missed + 1) if self.interval else None
        self.generation += 1
        self._wakeup(self)

    def read(self, n: int) -> bytes:
        if n < 8:
            raise GuestErrno(E.EINVAL)
        if not self.ticks:
            nothing_to_read(self, "timerfd")
        ticks, self.ticks = self.ticks, 0
        self.generation += 1
        return struct.pack("<Q", ticks)

    def write(self, data: bytes) -> int:
        raise GuestErrno(E.EINVAL)           # timerfd_fops has no write

    def poll_events(self) -> int:
        return POLLIN | POLLRDNORM if self.ticks else 0

    def available(self) -> int:
        return 8 if self.ticks else 0

    def stat(self) -> StatResult:
        return StatResult(ANON_INODE_DEV, ANON_INODE_INO, 0o600, 1, 0, 0, 0, 0, BLOCK_SIZE,
                          0, 0, 0, 0)

    def close(self) -> None:
        self.closed = True
