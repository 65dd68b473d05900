"""fanotify_init and fanotify_mark (fs/notify/fanotify/fanotify_user.c) over notify/fanotify.py.

fanotify_init: CAP_SYS_ADMIN (EPERM); unknown flags EINVAL; the event fds' flags among
O_ACCMODE, O_APPEND, O_NONBLOCK, O_SYNC, O_DSYNC, O_CLOEXEC, O_LARGEFILE, O_NOATIME with a
valid access mode (EINVAL); class NOTIF, CONTENT or PRE_CONTENT (the latter two may mark
permission events); EMFILE past max_user_groups (128). The file-handle reporting modes
(FAN_REPORT_FID, DIR_FID, NAME, TARGET_FID), FAN_REPORT_PIDFD and FAN_ENABLE_AUDIT are not
modeled and are EINVAL, as a kernel without them answers (LTP reads that as "not supported").

fanotify_mark's order: a mask above 32 bits, unknown flags, a mark type other than inode,
mount or filesystem, a command other than one of add, remove and flush, add or remove with no
event, events outside FANOTIFY_EVENTS and the event flags: EINVAL; the group fd (EBADF, EINVAL
if not fanotify); permission events on a NOTIF group, events without a path (create, attrib,
...) on a group that reports no file handles: EINVAL; flush with other flags EINVAL, else
every inode mark of the group goes; then the object: the path relative to dirfd (followed
unless FAN_MARK_DONT_FOLLOW; ENOTDIR for a non-directory under FAN_MARK_ONLYDIR), or dirfd's
own file without one (EBADF), readable by the caller (EACCES). FAN_EVENT_ON_CHILD is dropped
on a non-directory; removing from no mark is ENOENT. Mount and filesystem marks are not
modeled (one mount, no superblocks of their own): EINVAL, as for a kernel without them.
"""
from ... import errno as E
from ...creds import CAP_SYS_ADMIN
from ...errno import GuestErrno
from ...flags import AT_FDCWD, O_ACCMODE, O_APPEND, O_CLOEXEC, O_LARGEFILE, O_NOATIME, O_NONBLOCK
from ...fs.fsnotify import inode_key
from ...fs.permission import MAY_READ, access_of
from ...notify.fanotify import EVENT_FLAGS, PATH_EVENTS, Fanotify
from ...notify.fanotify_perm import PERM_EVENTS, PermissionWaits
from ..kinds import K
from ..registry import syscall
from .paths import _path_at, fs_view

FAN_CLOEXEC, FAN_NONBLOCK = 0x1, 0x2
FAN_CLASS_NOTIF, FAN_CLASS_CONTENT, FAN_CLASS_PRE_CONTENT, CLASS_BITS = 0x0, 0x4, 0x8, 0xC
FAN_UNLIMITED_QUEUE, FAN_UNLIMITED_MARKS, FAN_REPORT_TID = 0x10, 0x20, 0x100
INIT_FLAGS = (FAN_CLOEXEC | FAN_NONBLOCK | CLASS_BITS | FAN_UNLIMITED_QUEUE | FAN_UNLIMITED_MARKS
              | FAN_REPORT_TID)
O_SYNC, O_DSYNC = 0o4010000, 0o10000
EVENT_F_BITS = (O_ACCMODE | O_APPEND | O_NONBLOCK | O_SYNC | O_DSYNC | O_CLOEXEC | O_LARGEFILE
                | O_NOATIME)
MAX_USER_GROUPS = 128

FAN_MARK_ADD, FAN_MARK_REMOVE, FAN_MARK_DONT_FOLLOW, FAN_MARK_ONLYDIR = 0x1, 0x2, 0x4, 0x8
FAN_MARK_MOUNT, FAN_MARK_IGNORED_MASK, FAN_MARK_IGNORED_SURV_MODIFY = 0x10, 0x20, 0x40
FAN_MARK_FLUSH, FAN_MARK_FILESYSTEM, FAN_MARK_EVICTABLE = 0x80, 0x100, 0x200
TYPE_BITS = FAN_MARK_MOUNT | FAN_MARK_FILESYSTEM
MARK_FLAGS = (FAN_MARK_ADD | FAN_MARK_REMOVE | FAN_MARK_DONT_FOLLOW | FAN_MARK_ONLYDIR | TYPE_BITS
              | FAN_MARK_IGNORED_MASK | FAN_MARK_IGNORED_SURV_MODIFY | FAN_MARK_FLUSH
              | FAN_MARK_EVICTABLE)
# FANOTIFY_EVENTS: the path events, the inode events (attrib, moves, create, delete, the
# self events, rename) and FAN_FS_ERROR
FANOTIFY_EVENTS = (PATH_EVENTS | 0x4 | 0x40 | 0x80 | 0x100 | 0x200 | 0x400 | 0x800 | 0x10000000
                   | 0x8000)
FAN_EVENT_ON_CHILD = 0x08000000


@syscall("fanotify_init", args=(("flags", K.HEX), ("event_f_flags", K.OPEN_FLAGS)))
def sys_fanotify_init(ctx, flags, event_f_flags):
    flags, event_f_flags = flags & 0xFFFFFFFF, event_f_flags & 0xFFFFFFFF
    if not ctx.proc.creds.capable(CAP_SYS_ADMIN):
        raise GuestErrno(E.EPERM)
    if flags & ~INIT_FLAGS or event_f_flags & ~EVENT_F_BITS:
        raise GuestErrno(E.EINVAL)
    if event_f_flags & O_ACCMODE == O_ACCMODE or flags & CLASS_BITS == CLASS_BITS:
        raise GuestErrno(E.EINVAL)
    kernel = ctx.kernel
    groups = {id(entry.file) for p in kernel.processes.values() if p.fds is not None
              for entry in p.fds.entries.values() if isinstance(entry.file, Fanotify)}
    if len(groups) >= MAX_USER_GROUPS:
        raise GuestErrno(E.EMFILE)
    notify = kernel.fs.notify
    if notify.permission_waits is None:
        notify.permission_waits = PermissionWaits(kernel.wakeup)
    # force_o_largefile(): a 64-bit kernel opens the event fds O_LARGEFILE, compat tasks' too
    group = Fanotify(notify, kernel.wakeup, notify.current,
                     nonblocking=bool(flags & FAN_NONBLOCK),
                     event_flags=event_f_flags | O_LARGEFILE,
                     report_tid=bool(flags & FAN_REPORT_TID),
                     unlimited_queue=bool(flags & FAN_UNLIMITED_QUEUE),
                     permissions=flags & CLASS_BITS != FAN_CLASS_NOTIF)
    return ctx.proc.fds.install(group, cloexec=bool(flags & FAN_CLOEXEC))


@syscall("fanotify_mark", args=(("fanotify_fd", K.FD), ("flags", K.HEX), ("mask", K.HEX),
                                ("dirfd", K.DIRFD), ("pathname", K.PATH)),
         i386=(("fanotify_fd", K.FD), ("flags", K.HEX), ("mask", K.OFFSET64_SPLIT),
               ("dirfd", K.DIRFD), ("pathname", K.PATH)))
def sys_fanotify_mark(ctx, fd, flags, a, b, c, d):
    if ctx.abi == "i386":                  # compat: the u64 mask in two words, low first
        mask, dirfd, pathname = a | b << 32, c, d
    else:
        mask, dirfd, pathname = a, b, c
    flags &= 0xFFFFFFFF
    _check_mark_arguments(flags, mask)
    group = ctx.proc.fds.get(ctx.int32(fd))
    if not isinstance(group, Fanotify):
        raise GuestErrno(E.EINVAL)
    if mask & PERM_EVENTS and not group.permissions:
        raise GuestErrno(E.EINVAL)
    if flags & FAN_MARK_FLUSH:
        group.flush()
        return 0
    if mask & ~(PATH_EVENTS | PERM_EVENTS | EVENT_FLAGS):
        raise GuestErrno(E.EINVAL)         # events without a path need FID reporting
    node = _marked_inode(ctx, flags, ctx.int32(dirfd), pathname)
    if not node.is_dir:
        mask &= ~FAN_EVENT_ON_CHILD
    key, ignored = inode_key(node), bool(flags & FAN_MARK_IGNORED_MASK)
    if flags & FAN_MARK_ADD:
        group.add_mark(key, node.is_dir, mask, ignored,
                       bool(flags & FAN_MARK_IGNORED_SURV_MODIFY))
    else:
        group.remove_from_mark(key, mask, ignored)
    return 0


def _check_mark_arguments(flags: int, mask: int) -> None:
    """do_fanotify_mark's checks before it looks at the fd."""
    if mask >> 32 or flags & ~MARK_FLAGS:
        raise GuestErrno(E.EINVAL)
    if flags & TYPE_BITS:
        raise GuestErrno(E.EINVAL)         # mount and filesystem marks: not modeled
    command = flags & (FAN_MARK_ADD | FAN_MARK_REMOVE | FAN_MARK_FLUSH)
    if command not in (FAN_MARK_ADD, FAN_MARK_REMOVE, FAN_MARK_FLUSH):
        raise GuestErrno(E.EINVAL)
    if command == FAN_MARK_FLUSH and flags & ~(TYPE_BITS | FAN_MARK_FLUSH):
        raise GuestErrno(E.EINVAL)
    if command != FAN_MARK_FLUSH and not mask:
        raise GuestErrno(E.EINVAL)
    if mask & ~(FANOTIFY_EVENTS | EVENT_FLAGS | PERM_EVENTS):
        raise GuestErrno(E.EINVAL)


def _marked_inode(ctx, flags: int, dirfd: int, pathname: int):
    """fanotify_find_path(): the inode the mark goes on, readable by the caller."""
    view = fs_view(ctx)
    if not pathname:
        if dirfd == AT_FDCWD:
            raise GuestErrno(E.EBADF)
        node = getattr(ctx.proc.fds.get(dirfd), "node", None)
        if node is None:
            raise GuestErrno(E.EINVAL)     # a pipe or a socket: no inode to mark here
        if flags & FAN_MARK_ONLYDIR and not node.is_dir:
            raise GuestErrno(E.ENOTDIR)
    else:
        path, base = _path_at(ctx, dirfd & ctx.mask, pathname)
        node = ctx.kernel.fs.inode(path, base, view, follow=not flags & FAN_MARK_DONT_FOLLOW)
        if flags & FAN_MARK_ONLYDIR and not node.is_dir:
            raise GuestErrno(E.ENOTDIR)
    access_of(view).check(node.stat(), MAY_READ)
    return node
