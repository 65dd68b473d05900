"""signalfd (Linux fs/signalfd.c): a file from which a process reads its pending signals of a mask
instead of having them delivered. Each read takes as many as fit, one struct
signalfd_siginfo (128 bytes) each, sleeping — or EAGAIN under O_NONBLOCK — while none is
pending; it is readable to poll and epoll while one is. Posting a signal wakes the process's
signalfd channel (signals/delivery.py)."""
import struct

from .. import errno as E
from ..blocking import WouldBlock
from ..errno import GuestErrno
from ..fs.constants import BLOCK_SIZE, O_NONBLOCK, O_RDWR
from ..fs.eventfd import ANON_INODE_DEV, ANON_INODE_INO
from ..fs.records import StatResult
from ..fs.unseekable import Unseekable
from ..readiness import POLLIN, POLLRDNORM
from .delivery import signalfd_channel
from .frame import siginfo_of

SIGNALFD_SIGINFO_SIZE = 128
SI_TIMER = -2
SIGCHLD = 17


def signalfd_siginfo(word: int, sig: int, info: dict) -> bytes:
    """struct signalfd_siginfo of a dequeued signal (signalfd_copyinfo): its fields taken
    from the siginfo_t the signal carries."""
    raw = siginfo_of(word, sig, info)
    _, errno, code = struct.unpack_from("<iii", raw)
    body = 16 if word == 8 else 12
    first, second = struct.unpack_from("<iI", raw, body)
    value = struct.unpack_from("<Q" if word == 8 else "<I", raw, body + 8)[0]
    pid = uid = tid = overrun = status = 0
    if code == SI_TIMER:
        tid, overrun = first & 0xFFFFFFFF, second
    else:
        pid, uid = first & 0xFFFFFFFF, second
        if sig == SIGCHLD:
            status = struct.unpack_from("<i", raw, body + 8)[0]
    sival_int = struct.unpack_from("<i", raw, body + 8)[0]
    addr = info.get("addr") or 0
    head = struct.pack("<IiiIIiIIIIiiQQQQ", sig, errno, code, pid, uid, 0, tid, 0, overrun, 0,
                       status, sival_int, value, 0, 0, addr)
    return head.ljust(SIGNALFD_SIGINFO_SIZE, b"\0")


class SignalFd(Unseekable):
    is_tty = False

    def __init__(self, kernel, proc, mask: int, *, nonblocking: bool):
        self.kernel = kernel
        self.proc = proc                     # whose signals it reads (the creator's)
        self.mask = mask
        self.flags = O_RDWR | (O_NONBLOCK if nonblocking else 0)
        self.path = self.proc_link = b"anon_inode:[signalfd]"
        self.closed = False

    @property
    def wait_channel(self):
        return signalfd_channel(self.proc)

    @property
    def generation(self) -> int:             # epoll's EPOLLET: a new pending set is a change
        return self._pending()

    def _thread(self):
        current = self.kernel.current
        if current is not None and current.process is self.proc:
            return current
        live = self.proc.live_threads()
        return live[0] if live else None

    def _pending(self) -> int:
        thread = self._thread()
        own = thread.pending_signals if thread is not None else 0
        return (own | self.proc.pending_signals) & self.mask

    def read(self, n: int) -> bytes:
        if n < SIGNALFD_SIGINFO_SIZE:
            raise GuestErrno(E.EINVAL)
        thread = self._thread()
        if thread is None or not self._pending():
            if self.flags & O_NONBLOCK:
                raise GuestErrno(E.EAGAIN)
            raise WouldBlock(self.wait_channel, "read on signalfd")
        word = self.proc.space.machine.arch.bits // 8
        out = b""
        while len(out) + SIGNALFD_SIGINFO_SIZE <= n and self._pending():
            sig, info = self.kernel.signals.dequeue(thread, self.mask)
            out += signalfd_siginfo(word, sig, info)
        return out

    def write(self, data: bytes) -> int:
        raise GuestErrno(E.EINVAL)           # signalfd_fops has no write

    def poll_events(self) -> int:
        return POLLIN | POLLRDNORM if self._pending() else 0

    def available(self) -> int:
        return SIGNALFD_SIGINFO_SIZE if self._pending() else 0

    def stat(self) -> StatResult:
        return StatResult(ANON_INODE_DEV, ANON_INODE_INO, 0o600, 1, 0, 0, 0, 0, BLOCK_SIZE,
                          0, 0, 0, 0)

    def close(self) -> None:
        self.closed = True
