"""close_range(2) (fs/file.c): close, or mark close-on-exec, every open fd in [fd, max_fd].

CLOSE_RANGE_UNSHARE first gives the caller a table of its own when another process shares it
(clone with CLONE_FILES); threads of one process share one table in the model, as they do
by default in Linux.
"""
from ... import errno as E
from ...errno import GuestErrno
from ..kinds import K
from ..registry import syscall

CLOSE_RANGE_UNSHARE, CLOSE_RANGE_CLOEXEC = 1 << 1, 1 << 2


@syscall("close_range", args=(("first", K.UINT), ("last", K.UINT), ("flags", K.HEX)))
def sys_close_range(ctx, fd, max_fd, flags):
    fd, max_fd, flags = fd & 0xFFFFFFFF, max_fd & 0xFFFFFFFF, flags & 0xFFFFFFFF
    if flags & ~(CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC) or fd > max_fd:
        raise GuestErrno(E.EINVAL)
    table = ctx.proc.fds
    if flags & CLOSE_RANGE_UNSHARE and any(p.fds is table and p is not ctx.proc
                                           for p in ctx.kernel.processes.values()):
        table = ctx.proc.fds = table.copy()
    for number in sorted(n for n in table.entries if fd <= n <= max_fd):
        if flags & CLOSE_RANGE_CLOEXEC:
            table.entries[number].cloexec = True
        else:
            table.close(number)
    return 0
