"""RLIMIT_FSIZE: how large a process may make a regular file (fs/attr.c inode_newsize_ok).

Growing a file past the soft limit by truncate(2), ftruncate(2) or fallocate(2) fails with
EFBIG after SIGXFSZ is sent to the caller (send_sig(SIGXFSZ, current, 0): SI_USER from
itself), whose default action ends it with a core dump; a program that blocks or ignores the
signal sees the EFBIG. Shrinking, or a size the file already has, is always allowed.
"""
from ... import errno as E
from ...errno import GuestErrno
from ...signals.numbers import SIGXFSZ

RLIMIT_FSIZE = 1
RLIM_INFINITY = (1 << 64) - 1


def check_new_size(ctx, current: int, length: int) -> None:
    """inode_newsize_ok() for a file of `current` bytes asked to become `length` bytes."""
    if length <= current:
        return
    limit = ctx.proc.rlimits.get(RLIMIT_FSIZE, (RLIM_INFINITY, RLIM_INFINITY))[0]
    if limit != RLIM_INFINITY and length > limit:
        ctx.kernel.signals.post(ctx.proc, SIGXFSZ, thread=ctx.thread,
                                info={"code": 0, "pid": ctx.proc.pid})
        raise GuestErrno(E.EFBIG)
