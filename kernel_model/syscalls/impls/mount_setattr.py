"""mount_setattr(2) (fs/namespace.c: SYSCALL mount_setattr, build_mount_kattr,
do_mount_setattr) over the caller's mount namespace (fs/mount_table.py).

struct mount_attr is { u64 attr_set, attr_clr, propagation, userns_fd } (MOUNT_ATTR_SIZE_VER0,
32 bytes); a larger one must hold zeros past what the kernel knows (copy_struct_from_user:
E2BIG). The order is Linux's: flags (EINVAL), size (E2BIG past a page, EINVAL below VER0),
may_mount (EPERM), the copy, then a request that changes nothing returns 0 before the path is
looked up; then the attributes (EINVAL: unknown ones, more than one propagation type, an atime
change that does not clear the whole atime field, MOUNT_ATTR_IDMAP, which needs a user
namespace the sandbox does not model), the lookup, and a path that is no mount's root
(EINVAL). AT_RECURSIVE changes the mounts beneath it too.
"""
import struct

from ... import errno as E
from ...errno import GuestErrno
from ...fs import mount_points
from ...flags import AT_EMPTY_PATH, AT_SYMLINK_NOFOLLOW
from ...fs.mount_flags import (MNT_NOATIME, MNT_NODEV, MNT_NODIRATIME, MNT_NOEXEC, MNT_NOSUID,
                               MNT_NOSYMFOLLOW, MNT_READONLY, MNT_RELATIME, MS_PRIVATE,
                               MS_SHARED, MS_SLAVE, MS_UNBINDABLE, flags_of_options,
                               options_text)
from ..kinds import K
from ..registry import syscall
from .mount import TYPES, may_mount, mounted_at, set_propagation
from .paths import base_dir, fs_view

AT_NO_AUTOMOUNT, AT_RECURSIVE = 0x800, 0x8000
MOUNT_ATTR_SIZE_VER0, PAGE = 32, 4096
ATTR_RDONLY, ATTR_NOSUID, ATTR_NODEV, ATTR_NOEXEC = 0x1, 0x2, 0x4, 0x8
ATTR__ATIME, ATTR_NOATIME, ATTR_STRICTATIME, ATTR_NODIRATIME = 0x70, 0x10, 0x20, 0x80
ATTR_IDMAP, ATTR_NOSYMFOLLOW = 0x100000, 0x200000
VALID = (ATTR_RDONLY | ATTR_NOSUID | ATTR_NODEV | ATTR_NOEXEC | ATTR__ATIME | ATTR_NODIRATIME
         | ATTR_IDMAP | ATTR_NOSYMFOLLOW)
PROPAGATION = MS_SHARED | MS_PRIVATE | MS_SLAVE | MS_UNBINDABLE
# MOUNT_ATTR_* -> the per-mount flag (attr_flags_to_mnt_flags); the atime field apart
TO_MNT = ((ATTR_RDONLY, MNT_READONLY), (ATTR_NOSUID, MNT_NOSUID), (ATTR_NODEV, MNT_NODEV),
          (ATTR_NOEXEC, MNT_NOEXEC), (ATTR_NODIRATIME, MNT_NODIRATIME),
          (ATTR_NOSYMFOLLOW, MNT_NOSYMFOLLOW))


@syscall("mount_setattr", args=(("dfd", K.FD), ("path", K.PATH), ("flags", K.HEX),
                                ("uattr", K.PTR), ("usize", K.UINT)))
def sys_mount_setattr(ctx, dfd, path, flags, uattr, usize):
    flags &= 0xFFFFFFFF
    if flags & ~(AT_EMPTY_PATH | AT_RECURSIVE | AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT):
        raise GuestErrno(E.EINVAL)
    if usize > PAGE:
        raise GuestErrno(E.E2BIG)
    if usize < MOUNT_ATTR_SIZE_VER0:
        raise GuestErrno(E.EINVAL)
    may_mount(ctx)
    raw = ctx.read(uattr, usize)
    if any(raw[MOUNT_ATTR_SIZE_VER0:]):
        raise GuestErrno(E.E2BIG)
    attr_set, attr_clr, propagation, _ = struct.unpack("<4Q", raw[:MOUNT_ATTR_SIZE_VER0])
    if not (attr_set or attr_clr or propagation):
        return 0
    _check_attributes(attr_set, attr_clr, propagation)
    name = ctx.read_cstr(path, 4095)
    mounts = _target(ctx, dfd, name, flags)
    for mount in mounts:
        _change(mount, attr_set, attr_clr)
        if propagation:
            set_propagation(mount_points.namespace(ctx.kernel.fs, fs_view(ctx)), mount,
                            TYPES[propagation])
    return 0


def _check_attributes(attr_set: int, attr_clr: int, propagation: int) -> None:
    """build_mount_kattr's checks."""
    if propagation & ~PROPAGATION or bin(propagation).count("1") > 1:
        raise GuestErrno(E.EINVAL)
    if (attr_set | attr_clr) & ~VALID:
        raise GuestErrno(E.EINVAL)
    if (attr_set | attr_clr) & ATTR__ATIME and (
            attr_clr & ATTR__ATIME != ATTR__ATIME
            or attr_set & ATTR__ATIME not in (0, ATTR_NOATIME, ATTR_STRICTATIME)):
        raise GuestErrno(E.EINVAL)              # the whole field, to relatime (0) or one other
    if (attr_set | attr_clr) & ATTR_IDMAP:
        raise GuestErrno(E.EINVAL)                  # no user namespace to map through


def _target(ctx, dfd: int, name: bytes, flags: int) -> list:
    """The mount the path names (its root: EINVAL otherwise), and with AT_RECURSIVE those
    beneath it."""
    fs, view = ctx.kernel.fs, fs_view(ctx)
    if not name and flags & AT_EMPTY_PATH:
        f = ctx.proc.fds.get(ctx.int32(dfd))
        path = f.path
    else:
        where = mount_points.mount_target(fs, name, base_dir(ctx, dfd, name), view,
                                follow=not flags & AT_SYMLINK_NOFOLLOW)
        path = where.path
    ns = mount_points.namespace(fs, view)
    top = mounted_at(ns, path)
    return ns.subtree(top) if flags & AT_RECURSIVE else [top]


def _change(mount, attr_set: int, attr_clr: int) -> None:
    """mount_setattr_commit: the flags cleared, then set; the atime field as a whole."""
    mnt = flags_of_options(mount.options)
    for attr, flag in TO_MNT:
        if attr_clr & attr:
            mnt &= ~flag
        if attr_set & attr:
            mnt |= flag
    if attr_clr & ATTR__ATIME:
        mnt &= ~(MNT_NOATIME | MNT_RELATIME)
        atime = attr_set & ATTR__ATIME
        mnt |= MNT_NOATIME if atime == ATTR_NOATIME else 0 if atime == ATTR_STRICTATIME \
            else MNT_RELATIME
    mount.options = options_text(mnt)
