"""copy_file_range(2) (fs/read_write.c): bytes from one regular file to another inside the
kernel.

Linux's order: both fds (fdget: EBADF, O_PATH included), the offsets (*off_in and *off_out,
loff_t on both ABIs: EFAULT; without a pointer the file position), flags other than 0 EINVAL;
then generic_copy_file_checks: a directory either side EISDIR, anything but a regular file
EINVAL, an input not open for reading or an output not open for writing or opened O_APPEND
EBADF, offsets that would wrap EOVERFLOW, the length cut at the input's end, the output's size
limit (RLIMIT_FSIZE: EFBIG with SIGXFSZ), overlapping ranges of one file EINVAL; a negative
offset is EOVERFLOW (the reference host's 6.18 answer). Nothing to copy returns 0. The copy is a read at the input
offset and a write at the output offset (the output's mtime changes as a write's); the offsets
given by pointer are written back advanced, else the file positions move.
"""
import struct

from ... import errno as E
from ...errno import GuestErrno
from ...flags import O_APPEND
from ..kinds import K
from ..registry import syscall
from ...file_size_limit import fit_write

MAX_RW = 0x7FFFF000                   # MAX_RW_COUNT


@syscall("copy_file_range", args=(("fd_in", K.FD), ("off_in", K.PTR), ("fd_out", K.FD),
                                  ("off_out", K.PTR), ("len", K.ULONG), ("flags", K.HEX)))
def sys_copy_file_range(ctx, fd_in, off_in, fd_out, off_out, length, flags):
    src = ctx.proc.fds.get_usable(ctx.int32(fd_in))
    dst = ctx.proc.fds.get_usable(ctx.int32(fd_out))
    pos_in = _offset(ctx, off_in, src)
    pos_out = _offset(ctx, off_out, dst)
    if ctx.int32(flags):
        raise GuestErrno(E.EINVAL)
    count = _checked_count(ctx, src, pos_in, dst, pos_out, min(length, MAX_RW))
    if count == 0:
        return 0
    written = dst.pwrite(src.pread(count, pos_in), pos_out)
    _advance(ctx, off_in, src, pos_in + written)
    _advance(ctx, off_out, dst, pos_out + written)
    return written


def _offset(ctx, pointer: int, f) -> int:
    if pointer:
        return struct.unpack("<q", ctx.read(pointer, 8))[0]
    return getattr(f, "position", 0)


def _advance(ctx, pointer: int, f, position: int) -> None:
    if pointer:
        ctx.write(pointer, struct.pack("<q", position))
    else:
        f.position = position


def _checked_count(ctx, src, pos_in: int, dst, pos_out: int, count: int) -> int:
    """generic_copy_file_checks(): the number of bytes to copy."""
    node_in, node_out = getattr(src, "node", None), getattr(dst, "node", None)
    if (node_in is not None and node_in.is_dir) or (node_out is not None and node_out.is_dir):
        raise GuestErrno(E.EISDIR)
    if node_in is None or node_out is None or not node_in.is_regular or not node_out.is_regular:
        raise GuestErrno(E.EINVAL)
    if not src.readable or not dst.writable or dst.flags & O_APPEND:
        raise GuestErrno(E.EBADF)
    if not (0 <= pos_in and pos_in + count < 1 << 63 and 0 <= pos_out and
            pos_out + count < 1 << 63):
        raise GuestErrno(E.EOVERFLOW)           # a negative offset too (measured natively)
    size_in = src.stat().size
    count = 0 if pos_in >= size_in else min(count, size_in - pos_in)
    count = len(fit_write(ctx, dst, b"\0" * count, pos_out)) if count else 0
    if node_in.same_inode(node_out) and pos_out + count > pos_in and pos_out < pos_in + count:
        raise GuestErrno(E.EINVAL)
    return count
