"""splice(2) and tee(2) (fs/splice.c): bytes moved between a pipe and a file or another pipe,
or copied from one pipe to another.

The model has no page references to hand over, so the bytes are copied; what each side sees is
Linux's. splice checks in do_splice's order: a length of 0 is 0 at once, an unknown flag
EINVAL, each fd EBADF (and EBADF again unless the input may be read and the output written);
then by which ends are pipes: both (an offset ESPIPE, the same pipe EINVAL), the input only
(an input offset ESPIPE, an output offset on a file without pwrite EINVAL, O_APPEND output
EINVAL, an output without f_op->splice_write EINVAL), the output only (the mirror, with
f_op->splice_read), neither (EINVAL). An input pipe with nothing in it is end of file once no
writer is left, else EAGAIN under SPLICE_F_NONBLOCK or O_NONBLOCK, else the caller sleeps; a
full output pipe likewise (EPIPE and SIGPIPE with no reader). tee copies without consuming,
between two different pipes only (else EINVAL).
"""
import struct

from ... import errno as E
from ...errno import GuestErrno
from ...flags import O_APPEND, O_NONBLOCK
from ...fs.constants import S_IFCHR
from ...fs.pipe import Pipe
from ...net.unix import UnixSocket
from ..kinds import K
from ..registry import syscall
from .fileio import _readable, _writable
from .vmsplice import SPLICE_F_ALL, SPLICE_F_NONBLOCK

MAX_RW = 0x7FFFF000                   # MAX_RW_COUNT: the most one call moves


@syscall("splice", args=(("fd_in", K.FD), ("off_in", K.PTR), ("fd_out", K.FD), ("off_out", K.PTR),
                         ("len", K.ULONG), ("flags", K.HEX)))
def sys_splice(ctx, fd_in, off_in, fd_out, off_out, length, flags):
    if length == 0:
        return 0
    if flags & ~SPLICE_F_ALL:
        raise GuestErrno(E.EINVAL)
    src, dst = ctx.proc.fds.get(ctx.int32(fd_in)), ctx.proc.fds.get(ctx.int32(fd_out))
    _readable(src)
    _writable(dst)
    ipipe, opipe = _pipe(src), _pipe(dst)
    length = min(length, MAX_RW)
    if ipipe is not None and opipe is not None:
        if off_in or off_out:
            raise GuestErrno(E.ESPIPE)
        if ipipe is opipe:
            raise GuestErrno(E.EINVAL)
        nonblocking = _nonblocking(flags, src, dst)
        if not _has_input(ipipe, nonblocking):
            return 0
        count = min(length, ipipe.buffered, opipe.splice_room(nonblocking))
        return opipe.write(ipipe.read(count, nonblocking), nonblocking)
    if ipipe is not None:
        return _pipe_to_file(ctx, ipipe, off_in, dst, off_out, length, _nonblocking(flags, src))
    if opipe is not None:
        return _file_to_pipe(ctx, src, off_in, opipe, off_out, length, _nonblocking(flags, dst))
    raise GuestErrno(E.EINVAL)


def _pipe_to_file(ctx, ipipe: Pipe, off_in, dst, off_out, length: int, nonblocking: bool) -> int:
    if off_in:
        raise GuestErrno(E.ESPIPE)
    offset = _offset(ctx, off_out, dst) if off_out else None
    if dst.flags & O_APPEND or not _splice_writes(dst):
        raise GuestErrno(E.EINVAL)
    if not _has_input(ipipe, nonblocking):
        return 0
    # the bytes leave the pipe once the output took them: a socket that makes the caller
    # sleep (the call is made again on waking) or a failed write loses none
    data = ipipe.peek(min(length, ipipe.buffered))
    written = dst.write(data) if offset is None else dst.pwrite(data, offset)
    ipipe.read(written, nonblocking)
    if offset is not None:
        ctx.write(off_out, struct.pack("<q", offset + written))
    return written


def _file_to_pipe(ctx, src, off_in, opipe: Pipe, off_out, length: int, nonblocking: bool) -> int:
    if off_out:
        raise GuestErrno(E.ESPIPE)
    offset = _offset(ctx, off_in, src) if off_in else None
    room = opipe.splice_room(nonblocking)               # splice_file_to_pipe: wait_for_space
    if not _splice_reads(src):
        raise GuestErrno(E.EINVAL)
    count = min(length, room)
    data = src.read(count) if offset is None else src.pread(count, offset)
    if not data:
        return 0
    sent = opipe.write(data, nonblocking)
    if offset is not None:
        ctx.write(off_in, struct.pack("<q", offset + sent))
    return sent


@syscall("tee", args=(("fd_in", K.FD), ("fd_out", K.FD), ("len", K.ULONG), ("flags", K.HEX)))
def sys_tee(ctx, fd_in, fd_out, length, flags):
    if flags & ~SPLICE_F_ALL:
        raise GuestErrno(E.EINVAL)
    if length == 0:
        return 0
    src, dst = ctx.proc.fds.get(ctx.int32(fd_in)), ctx.proc.fds.get(ctx.int32(fd_out))
    ipipe, opipe = _pipe(src), _pipe(dst)
    _readable(src)
    _writable(dst)
    if ipipe is None or opipe is None or ipipe is opipe:
        raise GuestErrno(E.EINVAL)
    nonblocking = _nonblocking(flags, src, dst)
    if not _has_input(ipipe, nonblocking):              # ipipe_prep
        opipe.splice_room(nonblocking)                  # opipe_prep, then nothing to link
        return 0
    count = min(length, ipipe.buffered, opipe.splice_room(nonblocking))
    return opipe.write(ipipe.peek(count), nonblocking)


def _pipe(f) -> Pipe | None:
    """get_pipe_info(): the pipe behind a pipe end or an opened fifo."""
    pipe = getattr(f, "pipe", None)
    return pipe if isinstance(pipe, Pipe) else None


def _nonblocking(flags: int, *files) -> bool:
    return bool(flags & SPLICE_F_NONBLOCK) or any(f.flags & O_NONBLOCK for f in files)


def _has_input(pipe: Pipe, nonblocking: bool) -> bool:
    """ipipe_prep / splice_pipe_to_pipe's wait: False at end of file (no writer left); EAGAIN or
    sleep while the pipe is empty."""
    if pipe.buffered:
        return True
    if pipe.writers == 0:
        return False
    pipe.read(1, nonblocking)            # empty with a writer: EAGAIN or WouldBlock, nothing read
    raise AssertionError("an empty pipe with a writer gave bytes")


def _offset(ctx, address: int, f) -> int:
    """*off_in or *off_out, a loff_t on both ABIs: a file that cannot pread/pwrite (no
    FMODE_PREAD/PWRITE: not seekable) is EINVAL, a negative offset EINVAL (rw_verify_area)."""
    if not _seekable(f):
        raise GuestErrno(E.EINVAL)
    offset = struct.unpack("<q", ctx.read(address, 8))[0]
    if offset < 0:
        raise GuestErrno(E.EINVAL)
    return offset


def _seekable(f) -> bool:
    node = getattr(f, "node", None)
    return node is not None and (node.is_regular or node.fmt == S_IFCHR)


def _splice_reads(f) -> bool:
    """f_op->splice_read: regular files (memfds and /proc's text files among them), the
    character devices that have one (/dev/zero, /dev/urandom; not /dev/null) and sockets."""
    if isinstance(f, UnixSocket):
        return True                       # sock_splice_read
    node = getattr(f, "node", None)
    if node is None or not getattr(node, "splice_read", True) or not getattr(f, "splice_read", True):
        return False
    return node.is_regular or node.fmt == S_IFCHR


def _splice_writes(f) -> bool:
    """f_op->splice_write: regular files, character devices and sockets; not eventfd, timerfd
    and the other anonymous inodes."""
    if isinstance(f, UnixSocket):
        return True                       # splice_to_socket
    node = getattr(f, "node", None)
    return node is not None and (node.is_regular or node.fmt == S_IFCHR)
