"""renameat2's RENAME_EXCHANGE (fs/namei.c do_renameat2, vfs_rename with the flag): two names,
both existing, trade their inodes in one step; a directory and a file may trade places.

The file system's nodes rename one name at a time, so the exchange is three renames through a
name no one sees (a system call runs whole: no guest observes the middle), and the watchers are
told what Linux tells them for an exchange (fsnotify_move both ways)."""
from .. import errno as E
from ..errno import GuestErrno
from .name_checks import may_delete
from .namei import LAST_NORM
from .permission import access_of


class RenameExchange:
    """FileSystem's part for RENAME_EXCHANGE (a mixin: it uses the walk of filesystem.py)."""

    def exchange(self, old: bytes, new: bytes, cwd: bytes, proc) -> None:
        src = self._resolve(old, cwd, proc, follow=False, parent_op=True)
        dst = self._resolve(new, cwd, proc, follow=False, parent_op=True)
        if src.parent.mount != dst.parent.mount:
            raise GuestErrno(E.EXDEV)
        if src.last != LAST_NORM or dst.last != LAST_NORM:
            raise GuestErrno(E.EBUSY)
        if src.node is None or dst.node is None:
            raise GuestErrno(E.ENOENT)
        old_parts, new_parts = src.components, dst.components
        if old_parts[:len(new_parts)] == new_parts or new_parts[:len(old_parts)] == old_parts:
            raise GuestErrno(E.EINVAL)      # one is the other's ancestor (lock_rename's trap)
        if src.node.same_inode(dst.node):
            return
        if src.is_mount_point or dst.is_mount_point:
            raise GuestErrno(E.EBUSY)
        access = access_of(proc)
        may_delete(access, src)
        may_delete(access, dst)
        hidden = _unused_name(src.parent)
        src.parent.rename(src.name, src.parent, hidden)
        dst.parent.rename(dst.name, src.parent, src.name)
        src.parent.rename(hidden, dst.parent, dst.name)
        self.notify.moved(src.parent, src.name, src.node, dst.parent, dst.name, None)
        self.notify.moved(dst.parent, dst.name, dst.node, src.parent, src.name, None)


def _unused_name(directory) -> bytes:
    n = 0
    while directory.lookup(b".trapline-exchange-%d" % n) is not None:
        n += 1
    return b".trapline-exchange-%d" % n
