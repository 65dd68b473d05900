"""openat2(2): openat with its arguments in a struct open_how (fs/open.c), every one checked.

The struct is extensible (copy_struct_from_user): a size under the first version's 24 bytes is
EINVAL, over a page E2BIG; bytes past the 24 the kernel knows must be readable (EFAULT) and
zero (E2BIG). Then build_open_flags: an unknown flag or resolve bit is EINVAL, as are a mode
without O_CREAT or O_TMPFILE, mode bits outside 07777, RESOLVE_BENEATH with RESOLVE_IN_ROOT,
O_PATH with other than O_DIRECTORY/O_NOFOLLOW/O_CLOEXEC, a malformed O_TMPFILE, and
RESOLVE_CACHED with a create or truncate (EAGAIN). Only then the path (EFAULT) and the walk,
which obeys the resolve flags (fs/namei.py).
"""
import struct

from ... import errno as E
from ...errno import GuestErrno
from ...flags import (O_ACCMODE, O_CLOEXEC, O_CREAT, O_DIRECTORY, O_PATH, O_PATH_FLAGS, O_RDONLY,
                      O_TMPFILE, O_TRUNC, OPEN_FLAGS)
from ...fs.resolve import (RESOLVE_BENEATH, RESOLVE_CACHED, RESOLVE_IN_ROOT,
                           VALID_RESOLVE_FLAGS)
from ..kinds import K
from ..registry import syscall
from .paths import _open

OPEN_HOW_SIZE_VER0 = 24               # u64 flags, mode, resolve
PAGE_SIZE = 4096
VALID_OPEN_FLAGS = O_ACCMODE
for _bit, _ in OPEN_FLAGS:
    VALID_OPEN_FLAGS |= _bit
O_TMPFILE_ONLY = O_TMPFILE & ~O_DIRECTORY          # __O_TMPFILE
S_IALLUGO = 0o7777


@syscall("openat2", args=(("dirfd", K.DIRFD), ("pathname", K.PATH), ("how", K.STRUCT),
                          ("size", K.ULONG)))
def sys_openat2(ctx, dirfd, pathname, how, size):
    flags, mode, resolve = _copy_open_how(ctx, how, size)
    _check_open_how(flags, mode, resolve)
    return _open(ctx, dirfd, pathname, flags, mode, resolve)


def _copy_open_how(ctx, how: int, size: int) -> tuple[int, int, int]:
    """copy_struct_from_user(): the tail past what the kernel knows first, then the struct."""
    size &= ctx.mask
    if size < OPEN_HOW_SIZE_VER0:
        raise GuestErrno(E.EINVAL)
    if size > PAGE_SIZE:
        raise GuestErrno(E.E2BIG)
    if any(ctx.read(how + OPEN_HOW_SIZE_VER0, size - OPEN_HOW_SIZE_VER0)):
        raise GuestErrno(E.E2BIG)
    return struct.unpack("<QQQ", ctx.read(how, OPEN_HOW_SIZE_VER0))


def _check_open_how(flags: int, mode: int, resolve: int) -> None:
    """build_open_flags()'s checks, in its order."""
    flags &= ~O_CLOEXEC
    if flags & ~VALID_OPEN_FLAGS or resolve & ~VALID_RESOLVE_FLAGS:
        raise GuestErrno(E.EINVAL)
    if resolve & RESOLVE_BENEATH and resolve & RESOLVE_IN_ROOT:
        raise GuestErrno(E.EINVAL)
    creates = bool(flags & O_CREAT or flags & O_TMPFILE_ONLY)
    if (mode & ~S_IALLUGO) if creates else mode:
        raise GuestErrno(E.EINVAL)
    if flags & O_TMPFILE_ONLY and (flags & (O_TMPFILE | O_CREAT) != O_TMPFILE
                                   or flags & O_ACCMODE == O_RDONLY):
        raise GuestErrno(E.EINVAL)
    if flags & O_PATH and flags & ~O_PATH_FLAGS:
        raise GuestErrno(E.EINVAL)
    # a cached-only lookup never creates or truncates; else it walks as any other, since
    # every name of the model is in memory (a lookup that would block does not exist)
    if resolve & RESOLVE_CACHED and flags & (O_TRUNC | O_CREAT | O_TMPFILE_ONLY):
        raise GuestErrno(E.EAGAIN)
