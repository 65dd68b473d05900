"""pivot_root(2) (fs/namespace.c SYSCALL pivot_root) in the caller's mount namespace
(fs/mount_table.py, whose mount points are global paths).

Checks, in Linux's order: may_mount (EPERM); new_root and put_old looked up as directories
(ENOENT, ENOTDIR); a shared put_old mount, or a shared parent of new_root's or of the root's
mount, is EINVAL; new_root or put_old on the root's own mount is EBUSY; then EINVAL when the
root is not a mount's root or is the namespace's first mount (the sandbox's rootfs: a process
pivots from a chroot into a mount of its own, as LTP's pivot_root01 does), when new_root is not
a mount's root, when put_old is not beneath new_root, or new_root not beneath the root.

Then the root's mount moves to put_old and new_root's mount to where the root was: in the
model's terms of global paths, new_root's mounts are re-pointed from new_root to the root's
path, and the root's other mounts from the root's path to put_old's place beneath it. A
process whose root or cwd was the old root sees the new one there (chroot_fs_refs), as their
paths do not change.
"""
from ... import errno as E
from ...errno import GuestErrno
from ...fs import mount_points
from ...fs.mount_table import SHARED
from ..kinds import K
from ..registry import syscall
from .mount import may_mount
from .paths import fs_view


@syscall("pivot_root", args=(("new_root", K.PATH), ("put_old", K.PATH)))
def sys_pivot_root(ctx, new_root, put_old):
    new_name, old_name = ctx.read_path(new_root), ctx.read_path(put_old)
    may_mount(ctx)
    fs, view = ctx.kernel.fs, fs_view(ctx)
    new, old = (_directory(fs, name, ctx.proc.cwd, view) for name in (new_name, old_name))
    ns = mount_points.namespace(fs, view)
    root = ctx.proc.root
    new_mnt, old_mnt, root_mnt = (ns.containing(path) for path in (new, old, root))
    by_id = {m.id: m for m in ns.mounts}
    if old_mnt.propagation == SHARED or any(
            getattr(by_id.get(m.parent), "propagation", None) == SHARED
            for m in (new_mnt, root_mnt)):
        raise GuestErrno(E.EINVAL)
    if new_mnt is root_mnt or old_mnt is root_mnt:
        raise GuestErrno(E.EBUSY)
    if root_mnt.point != root or root_mnt.parent == root_mnt.id or new_mnt.point != new:
        raise GuestErrno(E.EINVAL)
    if not _beneath(old, new) or not _beneath(new, root) or new == root:
        raise GuestErrno(E.EINVAL)
    _pivot(ns, new_mnt, root_mnt, new, root, root + old[len(new):])
    return 0


def _directory(fs, name: bytes, cwd: bytes, view) -> bytes:
    """user_path_at with LOOKUP_FOLLOW | LOOKUP_DIRECTORY: the global path."""
    where = mount_points.mount_target(fs, name, cwd, view)
    if not where.node.is_dir:
        raise GuestErrno(E.ENOTDIR)
    return where.path


def _pivot(ns, new_mnt, root_mnt, new: bytes, root: bytes, put_old: bytes) -> None:
    moving_new = ns.subtree(new_mnt)
    moving_root = [m for m in ns.subtree(root_mnt) if m not in moving_new]
    for mount in moving_new:
        mount.point = root + mount.point[len(new):]
    for mount in moving_root:
        mount.point = put_old + mount.point[len(root):]
    new_mnt.parent, root_mnt.parent = root_mnt.parent, _holder(moving_new, put_old).id
    ns.refresh()


def _holder(mounts: list, path: bytes):
    """The mount among `mounts` a path lies in (the longest point above it)."""
    return max((m for m in mounts if _beneath(path, m.point)), key=lambda m: len(m.point))


def _beneath(path: bytes, top: bytes) -> bool:
    return top == b"/" or path == top or path.startswith(top + b"/")
