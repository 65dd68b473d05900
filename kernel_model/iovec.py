"""User arrays of struct iovec (readv, writev), imported as Linux imports them (lib/iov_iter.c
__import_iovec, iovec_from_user, copy_iovec_from_user, import_ubuf), and the transfers through
them, which stop at the first byte that faults.

The checks come in Linux's order, each an errno rather than a read of whatever the guest
passed: the count is cut to 32 bits (import_iovec takes `unsigned nr_segs` from the
syscall's `unsigned long vlen`), 0 gives an empty vector, more than UIO_MAXIOV is EINVAL; the
array is copied entry by entry (EFAULT at the first entry that is not mapped, EINVAL at an
iov_len that is negative as an ssize_t); then each segment must pass access_ok (EFAULT) and
the total is capped at MAX_RW_COUNT (the segment that crosses it shortened).
"""
import struct

from . import errno as E
from .errno import GuestErrno
from .memory.vm import PROT_READ, PROT_WRITE

UIO_MAXIOV = 1024                 # include/uapi/linux/uio.h
MAX_RW_COUNT = 0x7FFFF000         # include/linux/fs.h: INT_MAX & PAGE_MASK


def import_iovec(ctx, uvec: int, vlen: int) -> list[tuple[int, int]]:
    """The (base, length) segments of the guest's iovec array `uvec` of `vlen` entries."""
    nr_segs = vlen & 0xFFFFFFFF
    if nr_segs == 0:
        return []
    if nr_segs > UIO_MAXIOV:
        raise GuestErrno(E.EINVAL)
    segments = _copy_entries(ctx, uvec, nr_segs)
    if nr_segs == 1:                 # __import_iovec_ubuf: the cap comes before access_ok
        base, length = segments[0]
        length = min(length, MAX_RW_COUNT)
        if not ctx.access_ok(base, length):
            raise GuestErrno(E.EFAULT)
        return [(base, length)]
    out, total = [], 0
    for base, length in segments:
        if not ctx.access_ok(base, length):
            raise GuestErrno(E.EFAULT)
        length = min(length, MAX_RW_COUNT - total)
        total += length
        out.append((base, length))
    return out


def _copy_entries(ctx, uvec: int, nr_segs: int) -> list[tuple[int, int]]:
    """copy_iovec_from_user / copy_compat_iovec_from_user: the array must lie in user space
    (user_access_begin), then each entry is read in turn, a negative length refused."""
    entry = 2 * ctx.word
    if not ctx.access_ok(uvec, nr_segs * entry):
        raise GuestErrno(E.EFAULT)
    mapped = ctx.accessible_prefix(uvec, nr_segs * entry, PROT_READ) // entry
    raw = ctx.read(uvec, mapped * entry)
    fmt = "<Ii" if ctx.word == 4 else "<Qq"
    segments = []
    for i in range(mapped):
        base, length = struct.unpack_from(fmt, raw, i * entry)
        if length < 0:
            raise GuestErrno(E.EINVAL)
        segments.append((base, length))
    if mapped < nr_segs:
        raise GuestErrno(E.EFAULT)
    return segments


def read_into(ctx, segments, read) -> int:
    """readv's transfer: `read(n)` gives at most n bytes, stored segment after segment. A
    segment that faults part way takes what fits before the fault, and the call returns what
    it moved, or EFAULT if that is nothing. A fault is found before reading, so a buffer that
    faults at once consumes no data (as sys_read; at end of file Linux would return 0)."""
    total = 0
    for base, length in segments:
        if not length:
            continue
        room = ctx.accessible_prefix(base, length, PROT_WRITE)
        if not room:
            if total:
                break
            raise GuestErrno(E.EFAULT)
        data = read(room)
        ctx.store(base, data)
        total += len(data)
        if len(data) < length:
            break
    return total


def gather(ctx, segments) -> tuple[bytes, bool]:
    """writev's bytes: the segments' contents up to the first byte that faults, and whether
    one did (the caller writes what came before it, or fails with EFAULT if nothing did)."""
    out = []
    for base, length in segments:
        room = ctx.accessible_prefix(base, length, PROT_READ)
        out.append(ctx.read(base, room))
        if room < length:
            return b"".join(out), True
    return b"".join(out), False
