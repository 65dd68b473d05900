"""Anonymous pipes (pipe(7)): a byte buffer with a read end and a write end.

The Pipe is also the wait channel: a reader finding it empty, or a writer finding it full,
raises WouldBlock(pipe) and every state change that could let one of them proceed (data
written, data read, an end closed) calls `wakeup(pipe)`. Because the kernel re-executes a
blocked call from scratch, every operation here re-checks its condition each time it runs.

Writes (pipe(7), "PIPE_BUF"): a write of at most PIPE_BUF bytes is atomic, so it waits until
all of it fits and is never interleaved. A larger blocking write in Linux sleeps in the middle
and returns only once every byte is in; here the call is re-executed from its start after a
sleep, which would write the first part twice. So a large write copies what fits and, if that
is at least one byte, returns that short count instead of sleeping; it sleeps only when not a
single byte fits. The C library's write loops (stdio's fflush, busybox full_write) continue
with the rest, so the bytes that reach the reader, and their order, are the same.

Packet mode (pipe2's O_DIRECT on the write end, fs/pipe.c PIPE_BUF_FLAG_PACKET): each write is
cut into packets of at most PIPE_BUF bytes, and a read takes at most one packet, the rest of a
packet longer than the read being discarded. The model keeps the packets' extents beside the
byte buffer (capacity stays counted in bytes, where Linux gives each packet a page's slot),
and a read of ordinary bytes stops where a packet begins.
"""
from typing import Callable

from .. import errno as E
from ..blocking import WouldBlock
from ..errno import GuestErrno
from ..errors import KernelPanic
from .constants import (BLOCK_SIZE, O_ACCMODE, O_DIRECT, O_NONBLOCK, O_RDONLY, O_WRONLY, PIPE_DEV,
                        S_IFIFO)
from .fasync import POLL_IN, POLL_OUT, kill_fasync
from .records import StatResult
from ..readiness import POLLERR, POLLHUP, POLLIN, POLLOUT, POLLRDNORM, POLLWRNORM
from .unseekable import Unseekable

PIPE_BUF = 4096                  # include/uapi/linux/limits.h: the atomic write size
DEFAULT_CAPACITY = 65536         # 16 pages: Linux's default pipe size (pipe(7), "Pipe capacity")


class BrokenPipe(GuestErrno):
    """A write found no reader. The syscall layer fails it with EPIPE and sends SIGPIPE to the
    writer (pipe(7)); without that special handling it is still an ordinary EPIPE."""

    def __init__(self, name: bytes):
        super().__init__(E.EPIPE, name.decode())


class Pipe:
    def __init__(self, wakeup: Callable[[object], None], ino: int, capacity: int = DEFAULT_CAPACITY):
        if capacity < PIPE_BUF:
            raise KernelPanic(f"pipe capacity {capacity} is below PIPE_BUF")    # F_SETPIPE_SZ's floor
        self._wakeup = wakeup
        self.ino = ino
        self.capacity = capacity
        self.name = b"pipe:[%d]" % ino
        self._buffer = bytearray()
        self._packets: list[tuple[int, int]] = []     # (start, end) offsets of packets in it
        self.readers = 0                 # open read ends (open file descriptions, not fds)
        self.writers = 0
        self.fasync: list = []           # descriptions with O_ASYNC (fasync.py)

    def __repr__(self) -> str:
        return f"<Pipe {self.name.decode()} {len(self._buffer)}/{self.capacity}B " \
               f"r={self.readers} w={self.writers}>"

    # ---- opening ends -----------------------------------------------------------------------
    def read_end(self) -> "PipeEnd":
        """A new read-side open file description (pipe() makes one; so does opening
        /proc/PID/fd/N of a pipe)."""
        self.readers += 1
        return PipeEnd(self, O_RDONLY)

    def write_end(self) -> "PipeEnd":
        self.writers += 1
        return PipeEnd(self, O_WRONLY)

    # ---- state ------------------------------------------------------------------------------
    @property
    def buffered(self) -> int:
        return len(self._buffer)

    @property
    def free(self) -> int:
        return self.capacity - len(self._buffer)

    # ---- data -------------------------------------------------------------------------------
    def peek(self, n: int) -> bytes:
        """The first `n` buffered bytes, left in the pipe (tee's link_pipe)."""
        return bytes(self._buffer[:n])

    def read(self, n: int, nonblocking: bool) -> bytes:
        if n == 0:
            return b""                   # pipe_read(): a zero-length read returns at once
        if not self._buffer:
            if self.writers == 0:
                return b""               # end of file: every writer has gone
            if nonblocking:
                raise GuestErrno(E.EAGAIN)
            raise WouldBlock(self, f"read on {self.name.decode()}")
        data, taken = self._take(n)
        del self._buffer[:taken]
        self._packets = [(start - taken, end - taken) for start, end in self._packets
                         if end > taken]
        self._wakeup(self)               # room for blocked writers
        if self.fasync:
            kill_fasync(self, O_WRONLY, POLL_OUT)
        return data

    def _take(self, n: int) -> tuple[bytes, int]:
        """What a read of `n` gets, and how many buffered bytes it uses up: the first packet
        (cut to `n`, the rest dropped) or the ordinary bytes before the next packet."""
        if self._packets and self._packets[0][0] == 0:
            end = self._packets[0][1]
            return bytes(self._buffer[:min(n, end)]), end
        limit = min(n, self._packets[0][0]) if self._packets else n
        return bytes(self._buffer[:limit]), limit

    def write(self, data: bytes, nonblocking: bool, packets: bool = False) -> int:
        n = len(data)
        if n == 0:
            return 0                     # pipe_write(): a null write succeeds, even with no reader
        if self.readers == 0:
            raise BrokenPipe(self.name)
        if n <= PIPE_BUF and self.free < n:
            return self._wait_for_room(nonblocking)      # atomic: all of it or nothing
        if self.free == 0:
            return self._wait_for_room(nonblocking)
        count = min(n, self.free)
        if packets:
            base = len(self._buffer)
            self._packets += [(base + at, base + min(at + PIPE_BUF, count))
                              for at in range(0, count, PIPE_BUF)]
        self._buffer += data[:count]
        self._wakeup(self)               # data for blocked readers
        if self.fasync:
            kill_fasync(self, O_RDONLY, POLL_IN)
        return count

    def splice_room(self, nonblocking: bool) -> int:
        """How many bytes a sendfile/splice into this pipe may take now; sleeps while it is full.

        fs/splice.c, splice_file_to_pipe(): wait_for_space() fails with EPIPE (and SIGPIPE) when
        no reader is left, sleeps (or EAGAIN under O_NONBLOCK) while the pipe is full, and only
        then does the file read happen, for at most what fits. Asking first keeps a re-executed
        call from consuming source bytes that the pipe could not take."""
        if self.readers == 0:
            raise BrokenPipe(self.name)
        if self.free == 0:
            return self._wait_for_room(nonblocking)
        return self.free

    def _wait_for_room(self, nonblocking: bool) -> int:
        if nonblocking:
            raise GuestErrno(E.EAGAIN)
        raise WouldBlock(self, f"write on {self.name.decode()}")

    def close_end(self, mode: int) -> None:
        if mode == O_RDONLY:
            self.readers -= 1
        else:
            self.writers -= 1
        self._wakeup(self)               # readers may now see EOF, writers EPIPE

    # ---- poll -------------------------------------------------------------------------------
    def events(self, mode: int) -> int:
        """pipe_poll(): what the read or the write side of this pipe is ready for."""
        if mode == O_RDONLY:
            mask = POLLIN | POLLRDNORM if self._buffer else 0
            return mask | (POLLHUP if self.writers == 0 else 0)
        # Linux reports POLLOUT while a page slot is free, so that a write of up to PIPE_BUF
        # bytes started after POLLOUT does not block; with a byte buffer that is PIPE_BUF free.
        mask = POLLOUT | POLLWRNORM if self.free >= PIPE_BUF else 0
        return mask | (POLLERR if self.readers == 0 else 0)


class PipeEnd(Unseekable):
    """One end of a pipe as an open file description (the OpenFile interface of kernel_model.fs).

    `flags` is a plain attribute: fcntl(F_SETFL) and FIONBIO change O_NONBLOCK in it."""

    is_tty = False
    splice_read = False         # pipefifo_fops has none (fs/pipe.c): sendfile from it is EINVAL

    def __init__(self, pipe: Pipe, mode: int):
        self.pipe = pipe
        self.flags = mode
        self.path = pipe.name            # what readlink(/proc/self/fd/N) shows
        self.proc_link = pipe.name
        self.closed = False

    def __repr__(self) -> str:
        side = "read" if self._mode == O_RDONLY else "write"
        return f"<PipeEnd {side} {self.path.decode()}>"

    @property
    def _mode(self) -> int:
        return self.flags & O_ACCMODE

    @property
    def _nonblocking(self) -> bool:
        return bool(self.flags & O_NONBLOCK)

    @property
    def wait_channel(self) -> Pipe:
        return self.pipe

    # ---- data -------------------------------------------------------------------------------
    def read(self, n: int) -> bytes:
        if self._mode != O_RDONLY or self.closed:
            raise GuestErrno(E.EBADF)
        return self.pipe.read(n, self._nonblocking)

    def write(self, data: bytes) -> int:
        if self._mode != O_WRONLY or self.closed:
            raise GuestErrno(E.EBADF)
        return self.pipe.write(bytes(data), self._nonblocking, bool(self.flags & O_DIRECT))

    def splice_room(self) -> int:
        """sendfile(2) into this end: the bytes it may take now (see Pipe.splice_room)."""
        if self._mode != O_WRONLY or self.closed:
            raise GuestErrno(E.EBADF)
        return self.pipe.splice_room(self._nonblocking)

    def available(self) -> int:
        """FIONREAD: bytes a read could take now."""
        return self.pipe.buffered

    def poll_events(self) -> int:
        return self.pipe.events(self._mode)

    # ---- a pipe is a stream: no offset, no size, no listing ---------------------------------
    def stat(self) -> StatResult:
        # Linux's pipefs inode: S_IFIFO | 0600, one link, owned by the creator (root here).
        # st_size stays 0 as on Linux (FIONREAD, not fstat, tells how much is buffered).
        return StatResult(PIPE_DEV, self.pipe.ino, S_IFIFO | 0o600, 1, 0, 0, 0, 0, BLOCK_SIZE,
                          0, 0, 0, 0)

    def close(self) -> None:
        """The last fd of this open file description went (in any process)."""
        if not self.closed:
            self.closed = True
            if self.pipe.fasync:          # __fput: the description leaves the fasync list
                self.pipe.fasync = [s for s in self.pipe.fasync if s.file is not self]
            self.pipe.close_end(self._mode)
