"""An open POSIX message queue (ipc/mqueue.c mqueue_file_operations): a descriptor mq_open
gives, close-on-exec; reading it gives the queue's status line, poll says whether a message
waits (POLLIN) or there is room (POLLOUT); mq_timedsend/receive need one for writing/reading."""
from .. import errno as E
from ..errno import GuestErrno
from ..fs.constants import BLOCK_SIZE, O_ACCMODE, O_RDONLY, O_RDWR, O_WRONLY, S_IFREG
from ..fs.records import StatResult
from ..fs.unseekable import Unseekable
from ..readiness import POLLIN, POLLOUT, POLLRDNORM, POLLWRNORM

MQUEUE_DEV = 0x13                 # the mqueue mount's anonymous device (a model value)


class MqueueFile(Unseekable):
    is_tty = False

    def __init__(self, queue, flags: int, on_close):
        self.queue = queue
        self.flags = flags
        self.path = self.proc_link = b"/" + queue.name
        self.closed = False
        self._on_close = on_close
        self._read_done = False

    @property
    def wait_channel(self):
        return self.queue

    @property
    def readable(self) -> bool:
        return self.flags & O_ACCMODE in (O_RDONLY, O_RDWR)

    @property
    def writable(self) -> bool:
        return self.flags & O_ACCMODE in (O_WRONLY, O_RDWR)

    def read(self, n: int) -> bytes:
        line = self.queue.status_line()
        if self._read_done:
            return b""
        self._read_done = True
        return line[:n]

    def write(self, data: bytes) -> int:
        raise GuestErrno(E.EINVAL)

    def poll_events(self) -> int:
        mask = POLLIN | POLLRDNORM if self.queue.messages else 0
        return mask | (0 if self.queue.full else POLLOUT | POLLWRNORM)

    def stat(self) -> StatResult:
        q = self.queue
        return StatResult(MQUEUE_DEV, q.ino, S_IFREG | q.mode, 1, q.uid, q.gid, 0,
                          len(q.status_line()), BLOCK_SIZE, 0, 0, 0, 0)

    def close(self) -> None:
        self.closed = True
        self._on_close(self)
