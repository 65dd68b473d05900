"""A pidfd (kernel/pid.c pidfd_create): a file that refers to a process.

It is readable (POLLIN) once the process has exited, whether or not it was reaped (pidfd_poll);
reading or writing it is EINVAL. Its wait channel is the process's exit (blocking.exit_channel),
which process/exit.py wakes.
"""
from .. import errno as E
from ..blocking import exit_channel
from ..errno import GuestErrno
from ..readiness import POLLIN, POLLRDNORM
from .constants import BLOCK_SIZE, O_NONBLOCK, O_RDWR
from .eventfd import ANON_INODE_DEV, ANON_INODE_INO
from .records import StatResult
from .unseekable import Unseekable


class PidFd(Unseekable):
    is_tty = False

    def __init__(self, process, nonblocking: bool):
        self.process = process
        self.flags = O_RDWR | (O_NONBLOCK if nonblocking else 0)
        self.path = self.proc_link = b"anon_inode:[pidfd]"
        self.closed = False

    @property
    def wait_channel(self) -> tuple:
        return exit_channel(self.process.pid)

    @property
    def exited(self) -> bool:
        return self.process.state == "zombie" or not self.process.live_threads()

    def read(self, n: int) -> bytes:
        raise GuestErrno(E.EINVAL)

    def write(self, data: bytes) -> int:
        raise GuestErrno(E.EINVAL)

    def poll_events(self) -> int:
        return POLLIN | POLLRDNORM if self.exited else 0

    def stat(self) -> StatResult:
        return StatResult(ANON_INODE_DEV, ANON_INODE_INO, 0o600, 1, 0, 0, 0, 0, BLOCK_SIZE,
                          0, 0, 0, 0)

    def close(self) -> None:
        self.closed = True
