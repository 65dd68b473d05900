"""dnotify (fs/notify/dnotify/dnotify.c): fcntl(fd, F_NOTIFY, events) on a directory asks for
a signal whenever something of the asked kinds happens in it.

F_NOTIFY's events become fsnotify's (convert_arg): DN_ACCESS, DN_MODIFY and DN_ATTRIB the
same, DN_CREATE a name created or moved in, DN_DELETE one deleted or moved out, DN_RENAME a
rename within the directory (FS_RENAME: fsnotify_handle_inode_event reports it only when the
old and new parents are the one watched). A watch hears its directory's own events and its
children's (the mark always has FS_EVENT_ON_CHILD). Each event sends the description's owner,
set to the calling process by F_NOTIFY (__f_setown with PIDTYPE_TGID), its F_SETSIG signal
(SIGIO without one) with si_code POLL_MSG and si_fd the fd the watch was set through
(send_sigio); without DN_MULTISHOT the watch ends after its first signal. A watch is one per
(fd table, description): F_NOTIFY again through either adds its events and records the new
fd (attach_dn), F_NOTIFY with no event and closing an fd of the description in that table
remove it (dnotify_flush from filp_close). F_NOTIFY on anything but a directory is ENOTDIR.
"""
from .. import errno as E
from ..errno import GuestErrno
from ..fs.fasync import F_OWNER_PID, POLL_MSG, fown_of, sigio_siginfo
from ..fs.fsnotify import (FS_RENAME, IN_ACCESS, IN_ATTRIB, IN_CREATE, IN_DELETE, IN_MODIFY,
                           IN_MOVED_FROM, IN_MOVED_TO, inode_key)

DN_ACCESS, DN_MODIFY, DN_CREATE, DN_DELETE, DN_RENAME, DN_ATTRIB = 0x1, 0x2, 0x4, 0x8, 0x10, 0x20
DN_MULTISHOT = 0x80000000
_EVENTS = {DN_ACCESS: IN_ACCESS, DN_MODIFY: IN_MODIFY, DN_ATTRIB: IN_ATTRIB,
           DN_CREATE: IN_CREATE | IN_MOVED_TO, DN_DELETE: IN_DELETE | IN_MOVED_FROM,
           DN_RENAME: FS_RENAME}


def events_of(arg: int) -> int:
    """convert_arg(): the fsnotify events F_NOTIFY's bits ask for."""
    mask = 0
    for dn, fs in _EVENTS.items():
        if arg & dn:
            mask |= fs
    return mask


class DnotifyWatch:
    """struct dnotify_struct: one description's request, through one fd of one table."""

    def __init__(self, fsnotify, key, table, file, fd: int, events: int, multishot: bool, send):
        self.fsnotify, self.key, self.table, self.file = fsnotify, key, table, file
        self.fd, self.events, self.multishot, self.send = fd, events, multishot, send

    def deliver(self, mask: int, name: bytes, cookie: int, unlinked: bool = False,
                subject=None) -> None:
        if not mask & self.events:
            return
        fown = fown_of(self.file)
        if fown.pid:
            self.send(fown, sigio_siginfo(fown, POLL_MSG, self.fd))
        if not self.multishot:
            self.ended()

    def ended(self) -> None:
        """The watch goes (its directory deleted, or flushed)."""
        self.fsnotify.remove(self.key, self)
        watches = getattr(self.file, "dnotify", [])
        if self in watches:
            watches.remove(self)


def set_dnotify(fsnotify, table, file, fd: int, arg: int, tgid: int, send) -> int:
    """fcntl_dirnotify(): F_NOTIFY's effect on the watch of (table, file)."""
    arg &= 0xFFFFFFFF
    if not arg & ~DN_MULTISHOT:
        flush(table, file)
        return 0
    node = getattr(file, "node", None)
    if node is None or not node.is_dir:
        raise GuestErrno(E.ENOTDIR)
    key = inode_key(node)
    if key is None:
        raise GuestErrno(E.ENOENT)
    watches = file.__dict__.setdefault("dnotify", [])
    found = next((w for w in watches if w.table is table), None)
    if found is not None:                    # attach_dn: the old one, with the new fd
        found.fd, found.events = fd, found.events | events_of(arg)
        found.multishot = found.multishot or bool(arg & DN_MULTISHOT)
    else:
        watch = DnotifyWatch(fsnotify, key, table, file, fd, events_of(arg),
                             bool(arg & DN_MULTISHOT), send)
        watches.append(watch)
        fsnotify.add(key, watch)
    fown = fown_of(file)
    fown.kind, fown.pid = F_OWNER_PID, tgid
    return 0


def flush(table, file) -> None:
    """dnotify_flush(): the table's watch through this description goes."""
    for watch in [w for w in getattr(file, "dnotify", ()) if w.table is table]:
        watch.ended()
