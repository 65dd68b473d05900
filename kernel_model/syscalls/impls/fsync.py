"""fsync and fdatasync (fs/sync.c do_fsync -> vfs_fsync_range): a file whose operations have no
fsync is EINVAL. Regular files, directories and block devices have one (the model has nothing to
write back, so they succeed at once); pipes and FIFOs (pipefifo_fops), sockets, character devices
such as /dev/null (mem_fops) and terminals, and anonymous-inode files (eventfd, epoll, timerfd,
signalfd: no file type in their mode) have none (LTP fsync03, fdatasync02)."""
from ... import errno as E
from ...errno import GuestErrno
from ...fs.constants import S_IFBLK, S_IFDIR, S_IFMT, S_IFREG
from ..kinds import K
from ..registry import syscall

WITH_FSYNC = (S_IFREG, S_IFDIR, S_IFBLK)


@syscall("fsync", "fdatasync", args=(("fd", K.FD),))
def sys_fsync(ctx, fd):
    f = ctx.proc.fds.get_usable(ctx.int32(fd))
    if f.stat().mode & S_IFMT not in WITH_FSYNC:
        raise GuestErrno(E.EINVAL)
    return 0
