"""umount2 and i386's umount (fs/namespace.c ksys_umount, can_umount, do_umount) over the
caller's mount namespace (fs/mount_table.py).

The order is Linux's: unknown flags (EINVAL), may_mount (EPERM), the lookup (following the
last link unless UMOUNT_NOFOLLOW), then can_umount: a path that is no mount's root is EINVAL,
and MNT_FORCE without CAP_SYS_ADMIN EPERM; then do_umount: MNT_EXPIRE with MNT_FORCE or
MNT_DETACH, or on the caller's root, is EINVAL, and the first MNT_EXPIRE of a mount only marks
it (EAGAIN). Without MNT_DETACH a busy mount is EBUSY (propagate_mount_busy): one with mounts
beneath it, or that a process's cwd, root or open file of this namespace is in. MNT_DETACH
takes it and those beneath it away at once (what still uses it keeps its files, as after a
lazy umount). The sandbox's own rootfs, /proc and /dev cannot be taken away: EBUSY (the
sandbox keeps them in use), EINVAL with MNT_EXPIRE.
"""
from ... import errno as E
from ...creds import CAP_SYS_ADMIN
from ...errno import GuestErrno
from ...fs import mount_points
from ..kinds import K
from ..registry import syscall
from .mount import may_mount, mounted_at
from .paths import fs_view

MNT_FORCE, MNT_DETACH, MNT_EXPIRE, UMOUNT_NOFOLLOW = 1, 2, 4, 8


@syscall("umount2", args=(("target", K.PATH), ("flags", K.HEX)))
def sys_umount2(ctx, target, flags):
    flags &= 0xFFFFFFFF
    if flags & ~(MNT_FORCE | MNT_DETACH | MNT_EXPIRE | UMOUNT_NOFOLLOW):
        raise GuestErrno(E.EINVAL)
    return _umount(ctx, target, flags)


@syscall("umount", args=(("target", K.PATH),))
def sys_umount(ctx, target):
    return _umount(ctx, target, 0)                  # i386 oldumount: ksys_umount(name, 0)


def _umount(ctx, target: int, flags: int) -> int:
    path = ctx.read_path(target)
    may_mount(ctx)
    fs, view = ctx.kernel.fs, fs_view(ctx)
    where = mount_points.mount_target(fs, path, ctx.proc.cwd, view,
                                      follow=not flags & UMOUNT_NOFOLLOW)
    ns = mount_points.namespace(fs, view)
    mount = mounted_at(ns, where.path)
    if flags & MNT_FORCE and not ctx.proc.creds.capable(CAP_SYS_ADMIN):
        raise GuestErrno(E.EPERM)
    if flags & MNT_EXPIRE:
        if where.path == ctx.proc.root or flags & (MNT_FORCE | MNT_DETACH) or mount.root is None:
            raise GuestErrno(E.EINVAL)
        if not mount.expiry_mark:
            mount.expiry_mark = True
            raise GuestErrno(E.EAGAIN)
    if mount.root is None:
        raise GuestErrno(E.EBUSY)
    if flags & MNT_DETACH:
        ns.detach(ns.subtree(mount))
        return 0
    if ns.children(mount) or _in_use(ctx, ns, mount.point):
        raise GuestErrno(E.EBUSY)
    ns.detach([mount])
    return 0


def _in_use(ctx, ns, point: bytes) -> bool:
    """A process of the namespace has its cwd or root beneath the mount point, or an open
    file in the mount. The model keeps a cwd as a path: one at the mount point itself may be
    the directory beneath the mount (a chdir made before it, as LTP's tmpdir is), which does
    not keep it busy, and is taken so."""
    fs = ctx.kernel.fs
    for proc in ctx.kernel.processes.values():
        if (proc.mount_ns or mount_points.namespace(fs, None)) is not ns or proc.space is None:
            continue
        beneath = point.rstrip(b"/") + b"/"
        if proc.cwd.startswith(beneath) or proc.root.startswith(beneath):
            return True
        if any(isinstance(path, bytes) and (path == point or path.startswith(beneath))
               for path in (getattr(e.file, "path", None) for e in proc.fds.entries.values())):
            return True
    return False
