"""getdents/getdents64: directory entries marshalled as Linux's linux_dirent(64).

fs/readdir.c: each record is d_ino, d_off, d_reclen, (d_type,) d_name NUL-terminated, padded
to the record alignment; old getdents keeps d_type in the record's last byte. Entries that do
not fit wait in the open file for the next call; a buffer too small for even one is EINVAL.
"""
import struct

from ... import errno as E
from ...errno import GuestErrno
from ..kinds import K
from ..registry import syscall


def _align(n: int, a: int) -> int:
    return (n + a - 1) & ~(a - 1)


def _record64(ino: int, off: int, name: bytes, dtype: int) -> bytes:
    reclen = _align(19 + len(name) + 1, 8)
    return struct.pack("<QqHB", ino, off, reclen, dtype) + name + b"\0" * (reclen - 19 - len(name))


def _record_old(word: int, ino: int, off: int, name: bytes, dtype: int) -> bytes:
    fmt = "<IiH" if word == 4 else "<QqH"
    head = struct.calcsize(fmt)
    reclen = _align(head + len(name) + 2, word)
    body = struct.pack(fmt, ino & ((1 << (8 * word)) - 1), off, reclen) + name + b"\0"
    return body + b"\0" * (reclen - len(body) - 1) + bytes([dtype])


def _getdents(ctx, fd, dirp, count, encode):
    f = ctx.proc.fds.get(ctx.int32(fd))
    if getattr(f, "dent_buffer", None) is None:
        f.dent_buffer = list(f.getdents())
        f.dent_index = 0
    out = bytearray()
    while f.dent_index < len(f.dent_buffer):
        entry = f.dent_buffer[f.dent_index]
        record = encode(entry, f.dent_index + 1)
        if len(out) + len(record) > count:
            if not out:
                raise GuestErrno(E.EINVAL)
            break
        out += record
        f.dent_index += 1
    ctx.write(dirp, bytes(out))
    return len(out)


@syscall("getdents64", args=(("fd", K.FD), ("dirp", K.STRUCT), ("count", K.UINT)))
def sys_getdents64(ctx, fd, dirp, count):
    return _getdents(ctx, fd, dirp, count, lambda e, off: _record64(e.ino, off, e.name, e.dtype))


@syscall("getdents", args=(("fd", K.FD), ("dirp", K.STRUCT), ("count", K.UINT)))
def sys_getdents(ctx, fd, dirp, count):
    return _getdents(ctx, fd, dirp, count,
                     lambda e, off: _record_old(ctx.word, e.ino, off, e.name, e.dtype))
