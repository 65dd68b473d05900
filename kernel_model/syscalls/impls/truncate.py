"""truncate(2) and i386's truncate64 (fs/open.c do_sys_truncate): a path's file to a length, the
file-size limit checked where do_truncate checks it (file_size_limit.py)."""
from ... import errno as E
from ...errno import GuestErrno
from ...flags import AT_FDCWD, O_WRONLY
from ..kinds import K
from ..registry import syscall
from ...file_size_limit import check_new_size
from .leases import break_leases
from .paths import _path_at, fs_view, guarded_fs


@syscall("truncate", args=(("pathname", K.PATH), ("length", K.LONG)))
def sys_truncate(ctx, pathname, length):
    return _truncate(ctx, pathname, ctx.signed(length))


@syscall("truncate64", args=(("pathname", K.PATH), ("length_low", K.ULONG),
                             ("length_high", K.ULONG)))
def sys_truncate64(ctx, pathname, low, high):
    """i386: the loff_t in two words, low first (compat_sys_ia32_truncate64)."""
    length = low | high << 32
    return _truncate(ctx, pathname, length - (1 << 64) if length >> 63 else length)


def _truncate(ctx, pathname, length: int) -> int:
    path, base = _path_at(ctx, AT_FDCWD & ctx.mask, pathname)
    if length < 0:
        raise GuestErrno(E.EINVAL)
    break_leases(ctx, path, base, fs_view(ctx), O_WRONLY)     # do_truncate's break_lease
    guarded_fs(ctx).truncate(path, length, base, fs_view(ctx),
                           lambda size: check_new_size(ctx, size, length))
    return 0
