"""RLIMIT_FSIZE: how large a process may make a regular file (fs/attr.c inode_newsize_ok,
mm/filemap.c generic_write_check_limits).

Growing a file past the soft limit by truncate(2), ftruncate(2) or fallocate(2) fails with
EFBIG after SIGXFSZ is sent to the caller (send_sig(SIGXFSZ, current, 0): SI_USER from
itself), whose default action ends it with a core dump; a program that blocks or ignores the
signal sees the EFBIG. Shrinking, or a size the file already has, is always allowed. A
write(2), pwrite64 or writev takes what fits below the limit, and one that starts at or past
it is EFBIG with SIGXFSZ.
"""
from . import errno as E
from .errno import GuestErrno
from .flags import O_APPEND
from .signals.numbers import SIGXFSZ

RLIMIT_FSIZE = 1
RLIM_INFINITY = (1 << 64) - 1


def check_new_size(ctx, current: int, length: int) -> None:
    """inode_newsize_ok() for a file of `current` bytes asked to become `length` bytes."""
    if length <= current:
        return
    limit = ctx.proc.rlimits.get(RLIMIT_FSIZE, (RLIM_INFINITY, RLIM_INFINITY))[0]
    if limit != RLIM_INFINITY and length > limit:
        _send_sigxfsz(ctx)
        raise GuestErrno(E.EFBIG)


def fit_write(ctx, f, data: bytes, position: int | None = None) -> bytes:
    """generic_write_check_limits() for a write of `data` to `f` at `position` (the file
    position, or its end with O_APPEND, when None): a regular file takes what fits under
    the soft limit; at or past it the write is EFBIG with SIGXFSZ. Only with a limit set,
    so that an unlimited process's writes (the common case) cost one look-up."""
    limit = ctx.proc.rlimits.get(RLIMIT_FSIZE)
    if limit is None or limit[0] == RLIM_INFINITY or not data:
        return data
    node = getattr(f, "node", None)
    if node is None or not node.is_regular:
        return data
    if position is None:
        position = f.stat().size if f.flags & O_APPEND else f.position
    if position >= limit[0]:
        _send_sigxfsz(ctx)
        raise GuestErrno(E.EFBIG)
    return data[:limit[0] - position]


def _send_sigxfsz(ctx) -> None:
    """send_sig(SIGXFSZ, current, 0): SI_USER, the caller's tgid and real uid."""
    from .signals.sender import sent_by         # not at start-up: only a limit reached sends it
    ctx.kernel.signals.post(ctx.proc, SIGXFSZ, thread=ctx.thread, info=sent_by(ctx.proc, 0))
