"""inotify_init, inotify_init1, inotify_add_watch, inotify_rm_watch
(fs/notify/inotify/inotify_user.c) over kernel_model/notify/inotify.py.

add_watch checks as Linux does: IN_MASK_ADD with IN_MASK_CREATE, bits outside inotify's or no
bit at all are EINVAL; then the fd (EBADF; EINVAL if not an inotify instance); then the path
(followed unless IN_DONT_FOLLOW; ENOTDIR for a non-directory under IN_ONLYDIR), which the
caller must be allowed to read (EACCES). An instance past max_user_instances (128, or what
root wrote to /proc/sys/fs/inotify/max_user_instances: procsys.py Tunables) is EMFILE.
"""
from ... import errno as E
from ...errno import GuestErrno
from ...fs.constants import O_CLOEXEC, O_NONBLOCK
from ...fs.fsnotify import (IN_ALL_EVENTS, IN_IGNORED, IN_ISDIR, IN_Q_OVERFLOW, IN_UNMOUNT,
                            inode_key)
from ...fs.permission import MAY_READ, access_of
from ...notify.inotify import IN_ONESHOT, Inotify
from ..kinds import K
from ..registry import syscall
from .paths import fs_view

IN_ONLYDIR, IN_DONT_FOLLOW, IN_EXCL_UNLINK = 0x01000000, 0x02000000, 0x04000000
IN_MASK_CREATE, IN_MASK_ADD = 0x10000000, 0x20000000
ALL_INOTIFY_BITS = (IN_ALL_EVENTS | IN_UNMOUNT | IN_Q_OVERFLOW | IN_IGNORED | IN_ONLYDIR
                    | IN_DONT_FOLLOW | IN_EXCL_UNLINK | IN_MASK_CREATE | IN_MASK_ADD | IN_ISDIR
                    | IN_ONESHOT)


@syscall("inotify_init", args=())
def sys_inotify_init(ctx):
    return _init(ctx, 0)


@syscall("inotify_init1", args=(("flags", K.HEX),))
def sys_inotify_init1(ctx, flags):
    return _init(ctx, flags & 0xFFFFFFFF)


def _init(ctx, flags: int) -> int:
    if flags & ~(O_CLOEXEC | O_NONBLOCK):
        raise GuestErrno(E.EINVAL)
    instances = {id(entry.file) for p in ctx.kernel.processes.values() if p.fds is not None
                 for entry in p.fds.entries.values() if isinstance(entry.file, Inotify)}
    tunables = ctx.kernel.fs.tunables
    if len(instances) >= tunables.inotify_max_user_instances:
        raise GuestErrno(E.EMFILE)
    f = Inotify(ctx.kernel.fs.notify, ctx.kernel.wakeup, nonblocking=bool(flags & O_NONBLOCK),
                max_events=tunables.inotify_max_queued_events)
    return ctx.proc.fds.install(f, at=ctx.proc.fds.lowest_free(), cloexec=bool(flags & O_CLOEXEC))


def _instance(ctx, fd: int) -> Inotify:
    f = ctx.proc.fds.get(ctx.int32(fd))
    if not isinstance(f, Inotify):
        raise GuestErrno(E.EINVAL)
    return f


@syscall("inotify_add_watch", args=(("fd", K.FD), ("pathname", K.PATH), ("mask", K.HEX)))
def sys_inotify_add_watch(ctx, fd, pathname, mask):
    mask &= 0xFFFFFFFF
    if mask & IN_MASK_ADD and mask & IN_MASK_CREATE:
        raise GuestErrno(E.EINVAL)
    if mask & ~ALL_INOTIFY_BITS or not mask & ALL_INOTIFY_BITS:
        raise GuestErrno(E.EINVAL)
    instance = _instance(ctx, fd)
    path = ctx.read_path(pathname)
    view = fs_view(ctx)
    node = ctx.kernel.fs.inode(path, ctx.proc.cwd, view, follow=not mask & IN_DONT_FOLLOW)
    if mask & IN_ONLYDIR and not node.is_dir:
        raise GuestErrno(E.ENOTDIR)
    access_of(view).check(node.stat(), MAY_READ)
    key = inode_key(node)
    watched = mask & ~(IN_MASK_ADD | IN_MASK_CREATE | IN_ONLYDIR | IN_DONT_FOLLOW)
    return instance.watch(key, watched, add=bool(mask & IN_MASK_ADD),
                          create=bool(mask & IN_MASK_CREATE))


@syscall("inotify_rm_watch", args=(("fd", K.FD), ("wd", K.INT)))
def sys_inotify_rm_watch(ctx, fd, wd):
    _instance(ctx, fd).remove_watch(ctx.int32(wd))
    return 0
