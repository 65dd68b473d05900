"""fcntl's record-lock commands: F_GETLK/F_SETLK/F_SETLKW, i386's *64 forms and the OFD ones
(fs/fcntl.c, fs/locks.c fcntl_getlk/fcntl_setlk), over the kernel's LockTable (fs/locks.py).

struct flock: x86-64's has 64-bit offsets; i386's F_GETLK..F_SETLKW take 32-bit ones and its
F_GETLK64..F_SETLKW64 and F_OFD_* the packed struct flock64. x86-64 has no *64 commands
(EINVAL). The range is l_start from l_whence's base (0, the file position or the size), of
l_len bytes (0: to the end of the file, negative: the bytes before l_start).
"""
import struct

from ... import errno as E
from ...errno import GuestErrno
from ...flags import (F_GETLK, F_GETLK64, F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW, F_SETLK,
                      F_SETLK64, F_SETLKW, F_SETLKW64, O_ACCMODE, O_PATH, O_RDONLY, O_RDWR,
                      O_WRONLY, SEEK_CUR, SEEK_END, SEEK_SET)
from ...fs.locks import F_RDLCK, F_UNLCK, F_WRLCK, Lock, channel_of, inode_key

FLOCK_X86_64 = struct.Struct("<hh4xqqi4x")
FLOCK_I386 = struct.Struct("<hhiii")
FLOCK64_I386 = struct.Struct("<hhqqi")
GETS = (F_GETLK, F_GETLK64, F_OFD_GETLK)
WAITS = (F_SETLKW, F_SETLKW64, F_OFD_SETLKW)
OFD = (F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW)
COMMANDS = (F_GETLK, F_SETLK, F_SETLKW, F_GETLK64, F_SETLK64, F_SETLKW64) + OFD


def _layout(ctx, cmd: int) -> struct.Struct:
    if ctx.abi == "x86_64":
        if cmd in (F_GETLK64, F_SETLK64, F_SETLKW64):
            raise GuestErrno(E.EINVAL)
        return FLOCK_X86_64
    return FLOCK64_I386 if cmd in (F_GETLK64, F_SETLK64, F_SETLKW64) + OFD else FLOCK_I386


def _range(f, whence: int, start: int, length: int) -> tuple[int, int | None]:
    """flock_to_posix_lock(): [start, end] with end None for 'to the end of the file'."""
    if whence == SEEK_SET:
        base = 0
    elif whence == SEEK_CUR:
        base = getattr(f, "position", 0)
    elif whence == SEEK_END:
        base = f.stat().size
    else:
        raise GuestErrno(E.EINVAL)
    start += base
    if length > 0:
        end = start + length - 1
    elif length == 0:
        end = None
    else:
        start, end = start + length, start - 1
    if start < 0:
        raise GuestErrno(E.EINVAL)
    return start, end


def record_lock(ctx, f, cmd: int, arg: int) -> int:
    layout = _layout(ctx, cmd)
    raw = ctx.read(arg, layout.size)
    kind, whence, l_start, l_len, l_pid = layout.unpack(raw)
    ofd = cmd in OFD
    if ofd and l_pid != 0:
        raise GuestErrno(E.EINVAL)
    if kind not in (F_RDLCK, F_WRLCK, F_UNLCK):
        raise GuestErrno(E.EINVAL)
    start, end = _range(f, whence, l_start, l_len)
    owner = f if ofd else ctx.proc.fds
    wanted = Lock(owner, kind, start, end, -1 if ofd else ctx.proc.pid, ofd)
    key = inode_key(f)
    locks = ctx.kernel.locks
    if cmd in GETS:
        if kind == F_UNLCK:
            raise GuestErrno(E.EINVAL)
        found = locks.conflict(key, wanted)
        if found is None:
            ctx.write(arg, layout.pack(F_UNLCK, whence, l_start, l_len, l_pid))
        else:
            length = 0 if found.end is None else found.end - found.start + 1
            ctx.write(arg, layout.pack(found.kind, SEEK_SET, found.start, length, found.pid))
        return 0
    if f.flags & O_PATH or (kind == F_RDLCK and f.flags & O_ACCMODE not in (O_RDONLY, O_RDWR)) \
            or (kind == F_WRLCK and f.flags & O_ACCMODE not in (O_WRONLY, O_RDWR)):
        raise GuestErrno(E.EBADF)
    locks.set(key, wanted, cmd in WAITS, channel_of(key))
    return 0
