"""flock(2): whole-file advisory locks owned by the open file description (fs/locks.c
flock_lock_inode). They live in the kernel's LockTable beside the record locks but under a key
of their own, so the two kinds never conflict (as on Linux); a description's flock lock goes
when it closes (FdTable releases its owner's locks). A shared lock may turn exclusive and back
(the new kind replaces the old); LOCK_NB makes a conflict EWOULDBLOCK instead of a sleep.
"""
from ... import errno as E
from ...errno import GuestErrno
from ...flags import O_PATH
from ...fs.locks import F_RDLCK, F_UNLCK, F_WRLCK, Lock, channel_of, inode_key
from ..kinds import K
from ..registry import syscall

LOCK_SH, LOCK_EX, LOCK_NB, LOCK_UN = 1, 2, 4, 8
KINDS = {LOCK_SH: F_RDLCK, LOCK_EX: F_WRLCK, LOCK_UN: F_UNLCK}


@syscall("flock", args=(("fd", K.FD), ("operation", K.INT)))
def sys_flock(ctx, fd, operation):
    f = ctx.proc.fds.get(ctx.int32(fd))
    operation = ctx.int32(operation)
    kind = KINDS.get(operation & ~LOCK_NB)
    if kind is None:
        raise GuestErrno(E.EINVAL)
    if f.flags & O_PATH:
        raise GuestErrno(E.EBADF)
    key = ("flock",) + inode_key(f)
    ctx.kernel.locks.set(key, Lock(f, kind, 0, None, ctx.proc.pid, ofd=True),
                         not operation & LOCK_NB, channel_of(key))
    return 0
