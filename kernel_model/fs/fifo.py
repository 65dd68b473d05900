"""Named pipes: opening a fifo inode of the file system (Linux fs/pipe.c, fifo_open).

The inode keeps one Pipe while any end of it is open (`node.pipe`, Linux's inode->i_pipe); it
goes, with whatever bytes are still buffered, when the last end closes (put_pipe_info). The
ends are ordinary pipe ends (kernel_model/fs/pipe.py), so reads, writes, poll, EOF and EPIPE are
the anonymous pipe's. What is particular to a fifo is open(2):
- O_RDONLY counts a reader and, without O_NONBLOCK, sleeps until some writer has opened since
  (wait_for_partner on w_counter);
- O_WRONLY with O_NONBLOCK fails with ENXIO while no reader is there; without it, it counts a
  writer and sleeps until some reader has opened since (r_counter);
- O_RDWR counts both and never sleeps (Linux leaves this undefined in POSIX but allows it).

A blocked call is re-executed from scratch when woken (kernel_model/blocking.py), so an opener
that sleeps is remembered in `waiting` with the partner counter it saw: it stays counted (a
writer arriving must find the sleeping reader, as in Linux) and is not counted twice when its
open runs again.
"""
from .. import errno as E
from ..blocking import WouldBlock
from ..errno import GuestErrno
from .constants import O_ACCMODE, O_NONBLOCK, O_RDONLY, O_RDWR, O_WRONLY
from .records import StatResult
from .pipe import Pipe, PipeEnd


class FifoState:
    """What fs/pipe.c keeps in pipe_inode_info for fifo_open: counters of opens ever made."""

    def __init__(self, pipe: Pipe):
        self.pipe = pipe
        self.r_counter = 0
        self.w_counter = 0
        # sleeping opener (thread) -> (its access mode, the partner counter it saw)
        self.waiting: dict[object, tuple[int, int]] = {}


def open_fifo(kernel, opener, node, path: bytes, flags: int):
    """The open file description of an open(2) of fifo `node` by thread `opener`."""
    state = node.pipe
    if state is None:
        state = node.pipe = FifoState(Pipe(kernel.wakeup, node.ino))
    mode = flags & O_ACCMODE
    if mode == O_RDWR:
        return _end(kernel, node, state, path, flags, readers=1, writers=1)
    if opener in state.waiting:
        return _resume(kernel, opener, node, state, path, flags)
    pipe = state.pipe
    if mode == O_WRONLY and flags & O_NONBLOCK and pipe.readers == 0:
        _drop_if_unused(node)
        raise GuestErrno(E.ENXIO)
    reading = mode == O_RDONLY
    partners = pipe.writers if reading else pipe.readers
    end = _end(kernel, node, state, path, flags, readers=int(reading), writers=int(not reading))
    if partners or (reading and flags & O_NONBLOCK):
        return end
    # No partner yet: sleep, still counted, until the partner counter moves.
    state.waiting[opener] = (mode, state.w_counter if reading else state.r_counter)
    end.closed = True                  # not installed: the re-executed open makes the fd
    raise WouldBlock(pipe, f"open of fifo {path.decode(errors='replace')}")


def _resume(kernel, opener, node, state: FifoState, path: bytes, flags: int):
    reading = flags & O_ACCMODE == O_RDONLY
    _, seen = state.waiting[opener]
    if (state.w_counter if reading else state.r_counter) == seen:
        raise WouldBlock(state.pipe, f"open of fifo {path.decode(errors='replace')}")
    del state.waiting[opener]
    return FifoEnd(node, state.pipe, flags, path)       # already counted when it went to sleep


def _end(kernel, node, state: FifoState, path: bytes, flags: int, *, readers: int,
         writers: int) -> "FifoEnd":
    pipe = state.pipe
    pipe.readers += readers
    pipe.writers += writers
    state.r_counter += readers
    state.w_counter += writers
    _partner_arrived(state, readers=readers, writers=writers)
    kernel.wakeup(pipe)                # wake_up_partner(): sleeping openers re-check
    return FifoEnd(node, pipe, flags, path)


def _partner_arrived(state: FifoState, *, readers: int, writers: int) -> None:
    """Sleeping openers whose partner has now come finish their open even if a signal reaches
    them before they run again (fifo_open's wait_for_partner sees its condition first)."""
    for opener, (kind, _) in state.waiting.items():
        if (kind == O_RDONLY and writers) or (kind == O_WRONLY and readers):
            opener.restart["condition_met"] = True


def _drop_if_unused(node) -> None:
    state = node.pipe
    if state is not None and state.pipe.readers == 0 and state.pipe.writers == 0 \
            and not state.waiting:
        node.pipe = None               # put_pipe_info(): buffered bytes go with the pipe


class FifoEnd(PipeEnd):
    """An open file description of a fifo: a pipe end that names the fifo's path and inode,
    and that may be both ends at once (O_RDWR)."""

    def __init__(self, node, pipe: Pipe, flags: int, path: bytes):
        super().__init__(pipe, flags)
        self.node = node
        self.path = path
        self.proc_link = path

    def read(self, n: int) -> bytes:
        if self._mode == O_WRONLY or self.closed:
            raise GuestErrno(E.EBADF)
        return self.pipe.read(n, self._nonblocking)

    def write(self, data: bytes) -> int:
        if self._mode == O_RDONLY or self.closed:
            raise GuestErrno(E.EBADF)
        return self.pipe.write(bytes(data), self._nonblocking)

    def splice_room(self) -> int:
        if self._mode == O_RDONLY or self.closed:
            raise GuestErrno(E.EBADF)
        return self.pipe.splice_room(self._nonblocking)

    def poll_events(self) -> int:
        if self._mode == O_RDWR:
            return self.pipe.events(O_RDONLY) | self.pipe.events(O_WRONLY)
        return self.pipe.events(self._mode)

    def stat(self) -> StatResult:
        return self.node.stat()        # the fifo's own inode, not pipefs's

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self._mode in (O_RDONLY, O_RDWR):
            self.pipe.close_end(O_RDONLY)
        if self._mode in (O_WRONLY, O_RDWR):
            self.pipe.close_end(O_WRONLY)
        _drop_if_unused(self.node)
