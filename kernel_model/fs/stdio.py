"""Open files for the first process's fds 0, 1 and 2: the host's stdio, or memory for tests.

Both report a FIFO in fstat and is_tty False: the guest never gets a terminal, so its behaviour
(buffering, prompts) does not depend on how the host was started.
"""
import os

from emu import host_stop

from .. import errno as E
from ..errno import GuestErrno
from .constants import BLOCK_SIZE, O_RDONLY, O_RDWR, O_WRONLY, PIPE_DEV, S_IFIFO
from .pipe import BrokenPipe
from .records import StatResult
from .unseekable import Unseekable


def _fifo_stat(ino: int) -> StatResult:
    return StatResult(PIPE_DEV, ino, S_IFIFO | 0o600, 1, 0, 0, 0, 0, BLOCK_SIZE, 0, 0, 0, 0)


class _StreamFile(Unseekable):
    """A stream: no offset (lseek/pread/pwrite fail with ESPIPE), no truncate, no listing."""

    is_tty = False

    def __init__(self, path: bytes, flags: int, ino: int):
        self.path = path
        self.flags = flags
        self._ino = ino
        self.closed = False

    def stat(self) -> StatResult:
        return _fifo_stat(self._ino)

    def close(self) -> None:
        self.closed = True


class StdioFile(_StreamFile):
    """Passes reads and writes straight to a host fd (the sandbox's own stdin/stdout/stderr).
    Closing it does not close the host fd: the host process still owns it."""

    def __init__(self, host_fd: int):
        # A pipe's ends: stdin read-only, stdout and stderr write-only (F_GETFL shows what a
        # program started with its output piped sees, as under strace's comparison harness).
        super().__init__(b"pipe:[%d]" % host_fd, O_RDONLY if host_fd == 0 else O_WRONLY,
                         ino=host_fd + 1)
        self.host_fd = host_fd

    def read(self, n: int) -> bytes:
        try:
            with host_stop.blocking():      # Ctrl-C while the host's stdin has nothing to read
                return os.read(self.host_fd, n)
        except OSError as e:        # e.g. stdout redirected to a write-only file: EBADF
            raise GuestErrno(e.errno or E.EIO, "host stdio") from None

    def write(self, data: bytes) -> int:
        try:
            with host_stop.blocking():      # ... or while a host reader does not read
                return os.write(self.host_fd, bytes(data))
        except BrokenPipeError:     # the host reader went away: EPIPE and SIGPIPE (pipe(7))
            raise BrokenPipe(self.path) from None
        except OSError as e:        # stdin opened read-only, a full disk: the host's errno
            raise GuestErrno(e.errno or E.EIO, "host stdio") from None


class CapturedOutput(_StreamFile):
    """Collects what the guest writes in memory; reads come from `stdin` (then EOF)."""

    def __init__(self, stdin: bytes = b"", name: bytes = b"pipe:[0]"):
        super().__init__(name, O_RDWR, ino=1)
        self._input = bytes(stdin)
        self._chunks: list[bytes] = []

    @property
    def data(self) -> bytes:
        return b"".join(self._chunks)

    def read(self, n: int) -> bytes:
        out, self._input = self._input[:n], self._input[n:]
        return out

    def write(self, data: bytes) -> int:
        self._chunks.append(bytes(data))
        return len(data)
