"""fsnotify (fs/notify/fsnotify.c): file system events, and the watches that want them.

The file system reports what happens to an inode (`inode_event`: opened, read, written,
closed, attributes changed, deleted, moved) and to a directory's names (`name_event`:
created, deleted, moved from or to); an event on an inode is also a child event of the
directory it was reached through, which a watch on that directory receives with the child's
name (fsnotify_parent). A watch (notify/inotify.py's) is registered on an inode, keyed by
(st_dev, st_ino), with the mask of events it wants and a `deliver` callback. Nothing is
computed while no watch exists, so the file system's hot paths pay one test.

Event bits are inotify's (include/uapi/linux/inotify.h), which fsnotify shares.
"""
from collections import defaultdict

from ..errno import GuestErrno

IN_ACCESS, IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE = 0x1, 0x2, 0x4, 0x8
IN_CLOSE_NOWRITE, IN_OPEN, IN_MOVED_FROM, IN_MOVED_TO = 0x10, 0x20, 0x40, 0x80
IN_CREATE, IN_DELETE, IN_DELETE_SELF, IN_MOVE_SELF = 0x100, 0x200, 0x400, 0x800
IN_ALL_EVENTS = 0xFFF
IN_UNMOUNT, IN_Q_OVERFLOW, IN_IGNORED = 0x2000, 0x4000, 0x8000
IN_ISDIR = 0x40000000
# fanotify's permission events, fsnotify's own bits (FS_OPEN_PERM, FS_ACCESS_PERM)
FAN_OPEN_PERM, FAN_ACCESS_PERM = 0x10000, 0x20000
# a rename within one directory (fsnotify_move's FS_RENAME), which only dnotify hears: inotify
# and fanotify's legacy masks stop at 0xFFF
FS_RENAME = 0x10000000
SELF_EVENTS = IN_DELETE_SELF | IN_MOVE_SELF          # never reported to a parent
# the events an open file reports with its path: the ones IN_EXCL_UNLINK can hold back
PATH_EVENTS = IN_ACCESS | IN_MODIFY | IN_OPEN | IN_CLOSE_WRITE | IN_CLOSE_NOWRITE


def inode_key(node) -> tuple[int, int] | None:
    """(st_dev, st_ino), or None for an inode that cannot be stat'ed any more (a host file
    removed from the writable rootfs): no watch is on it."""
    try:
        st = node.stat()
    except GuestErrno:
        return None
    return st.dev, st.ino


class Fsnotify:
    def __init__(self):
        self.watches: dict[tuple[int, int], list] = defaultdict(list)
        self._cookie = 0
        # fanotify's permission marks (notify/fanotify.py): reads and opens ask them first
        self.perm_marks: set = set()
        self.permission_waits = None     # notify/fanotify_perm.py PermissionWaits, when made
        self.current = lambda: None      # the running thread (the kernel's), for event pids

    def perm_marks_changed(self, mark, has_perm: bool) -> None:
        if has_perm:
            self.perm_marks.add(mark)
        else:
            self.perm_marks.discard(mark)

    def permission(self, file, event: int) -> None:
        """fsnotify_perm(): the groups whose permission marks on the file (or on the directory
        it was opened through) want `event` must allow it first (WouldBlock while they think,
        EPERM if one denies)."""
        is_dir = IN_ISDIR if file.node.is_dir else 0
        groups: dict[int, tuple] = {}
        for key in (file.notify_parent, inode_key(file.node)):
            for watch in self.watches.get(key, ()) if key is not None else ():
                wanted = watch in self.perm_marks and watch.group.wants(event | is_dir, file)
                if wanted:
                    groups[id(watch.group)] = (watch.group, wanted)
        if groups:
            thread = self.current()
            self.permission_waits.check(thread.tid if thread is not None else 0, file, event,
                                        list(groups.values()))

    def add(self, key: tuple[int, int], watch) -> None:
        self.watches[key].append(watch)

    def remove(self, key: tuple[int, int], watch) -> None:
        found = self.watches.get(key)
        if found is not None and watch in found:
            found.remove(watch)
            if not found:
                del self.watches[key]

    def cookie(self) -> int:
        """A rename's cookie, linking its MOVED_FROM and MOVED_TO (fsnotify_get_cookie)."""
        self._cookie = self._cookie + 1 & 0xFFFFFFFF or 1
        return self._cookie

    def key_of(self, node) -> tuple[int, int] | None:
        """A directory's key for later child events, while any watch exists (else None: an
        open file keeps no directory alive for nobody's sake)."""
        return inode_key(node) if self.watches and node is not None else None

    def inode_event(self, node, mask: int, parent_key=None, name: bytes = b"",
                    file=None) -> None:
        """`mask` happened to `node`; the directory it was reached through (`parent_key`,
        with the name) hears it too, unless it is an event on the inode itself only. The
        directory's watch hears it first (fsnotify_handle_event: the parent mark, then the
        inode mark), watch by watch, whichever instance each belongs to. `file`: the open
        description the event is about (a path event: fanotify opens its path)."""
        if not self.watches or node is None:
            return
        is_dir = node.is_dir
        unlinked = bool(mask & PATH_EVENTS) and not is_dir and _unlinked(node)
        if parent_key is not None and not mask & SELF_EVENTS:
            self._send(parent_key, mask | (IN_ISDIR if is_dir else 0), name, unlinked=unlinked,
                       subject=file)
        self._send(inode_key(node), mask | (IN_ISDIR if is_dir and not mask & SELF_EVENTS else 0),
                   unlinked=unlinked, subject=file)

    def name_event(self, directory, mask: int, name: bytes, is_dir: bool, cookie: int = 0) -> None:
        """A name of `directory` was created, deleted or moved."""
        if not self.watches or directory is None:
            return
        self._send(inode_key(directory), mask | (IN_ISDIR if is_dir else 0), name, cookie)

    def opened(self, f, parent, name: bytes):
        """An open file description reports its reads, writes and close (fsnotify_open and
        the rest, openfile.py); its directory is the parent that hears them."""
        f.notify_parent, f.notify_name = self.key_of(parent), name
        if self.perm_marks:
            try:
                self.permission(f, FAN_OPEN_PERM)          # do_dentry_open: fsnotify_perm
            except BaseException:
                f.close()                                  # not a description yet: no event
                raise
        f.notify = self
        self.inode_event(f.node, IN_OPEN, f.notify_parent, name, f)
        return f

    def removed(self, parent, name: bytes, node, is_dir: bool) -> None:
        """unlink's IN_ATTRIB on the inode (fsnotify_link_count; rmdir has none), then
        d_delete_notify(): the inode's IN_DELETE_SELF when that was its last link, the
        directory's IN_DELETE, then the inode's watches end."""
        if not self.watches:
            return
        if not is_dir:
            self.inode_event(node, IN_ATTRIB)
        last = is_dir or node.stat().nlink == 0
        if last:
            self.delete_self(node)
        self.name_event(parent, IN_DELETE, name, is_dir)
        if last:
            self.drop(node)

    def moved(self, old_dir, old_name: bytes, node, new_dir, new_name: bytes, target) -> None:
        """fsnotify_move(): FS_RENAME within one directory, MOVED_FROM and MOVED_TO with one
        cookie, the replaced target's link count (and its end when that was its last link),
        the moved inode's MOVE_SELF."""
        if not self.watches:
            return
        cookie, is_dir = self.cookie(), node.is_dir
        if inode_key(old_dir) == inode_key(new_dir):
            # fsnotify_handle_inode_event passes FS_RENAME on only where the moved name's old
            # and new parents are the directory watched
            self.name_event(old_dir, FS_RENAME, old_name, is_dir)
        self.name_event(old_dir, IN_MOVED_FROM, old_name, is_dir, cookie)
        self.name_event(new_dir, IN_MOVED_TO, new_name, is_dir, cookie)
        if target is not None:
            self.inode_event(target, IN_ATTRIB)
            if is_dir or target.stat().nlink == 0:
                self.delete_self(target)
                self.drop(target)
        self.inode_event(node, IN_MOVE_SELF)

    def delete_self(self, node) -> None:
        """The inode lost its last link: IN_DELETE_SELF (fsnotify_inoderemove)."""
        if self.watches and node is not None:
            self._send(inode_key(node), IN_DELETE_SELF)

    def drop(self, node) -> None:
        """The deleted inode goes: its watches end (the marks' destruction: IN_IGNORED)."""
        if self.watches and node is not None:
            key = inode_key(node)
            for watch in list(self.watches.get(key, ()) if key is not None else ()):
                watch.ended()

    def _send(self, key, mask: int, name: bytes = b"", cookie: int = 0,
              unlinked: bool = False, subject=None) -> None:
        """`unlinked`: the event came through a name since removed (a watch with
        IN_EXCL_UNLINK does not hear it); `subject`: the open description of a path event."""
        if key is None:
            return
        for watch in list(self.watches.get(key, ())):
            watch.deliver(mask, name, cookie, unlinked, subject)


def _unlinked(node) -> bool:
    """d_unlinked() of the name an open file was reached through, as the inode's link count
    tells it: exact for a file with one name; a file with other names left is still called
    linked (the model's open file keeps no dentry to ask)."""
    try:
        return node.stat().nlink == 0
    except GuestErrno:
        return True
