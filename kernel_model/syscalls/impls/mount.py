"""mount(2) (fs/namespace.c: do_mount, path_mount and the do_* it dispatches to) over the
caller's mount namespace (fs/mount_table.py), as Linux does it for a holder of CAP_SYS_ADMIN.

Never the host's file systems: a mount makes an in-memory file system or shows a directory of
the sandbox's tree somewhere else, and nothing reaches the host (the rootfs stays the overlay).
What is modeled:
  - a new tmpfs, ramfs (as tmpfs) or hugetlbfs (fs/tmpfs.py: its options; EINVAL for an
    unknown one) on a directory;
  - MS_BIND (do_loopback) of a directory on a directory or a file on a file (ENOTDIR across),
    MS_REC with the mounts beneath it; a bind of a shared mount joins its peer group;
  - MS_REMOUNT (the per-mount flags and the superblock's read-only flag; with MS_BIND the
    mount's flags alone, do_reconfigure_mnt);
  - MS_SHARED, MS_PRIVATE, MS_SLAVE, MS_UNBINDABLE, with MS_REC (do_change_type);
  - MS_MOVE of a mount the guest made (do_move_mount_old).
What is not, with the errno Linux gives for it here: a type the kernel does not know, or one
the host registers but the sandbox does not model (proc, sysfs, cgroup, devpts, mqueue...),
is ENODEV (get_fs_type finds none); a block device file system (ext4, xfs, btrfs...) needs a
block device: no source is EINVAL, a missing one ENOENT, a file that is not a block device
ENOTBLK, a block device node ENXIO (the sandbox has no disks: blkdev_get_by_dev finds none).
The order of the checks is path_mount's: MS_NOUSER (EINVAL), may_mount (EPERM: no
CAP_SYS_ADMIN, or a Landlock-restricted task, whose hook_sb_mount refuses), the target's
lookup, then the operation's own.
"""
from dataclasses import replace

from ... import errno as E
from ...creds import CAP_SYS_ADMIN
from ...errno import GuestErrno
from ...fs import mount_points
from ...fs.constants import S_IFBLK, S_IFMT
from ...fs.mount_flags import (ATIME, MNT_READONLY, MS_ATIME, MS_BIND, MS_MGC_MSK, MS_MGC_VAL,
                               MS_MOVE, MS_NOUSER, MS_PRIVATE, MS_RDONLY, MS_REC, MS_REMOUNT,
                               MS_SHARED, MS_SILENT, MS_SLAVE, MS_UNBINDABLE, PROPAGATION,
                               flags_of_options, mnt_flags_of, options_text)
from ...fs.mount_table import PRIVATE, SHARED, SLAVE, UNBINDABLE, Mount
from ...fs.node import wants_write
from ..kinds import K
from ..registry import syscall
from .paths import fs_view

MODELED = {b"tmpfs": b"tmpfs", b"ramfs": b"tmpfs", b"hugetlbfs": b"hugetlbfs"}
BLOCK_TYPES = (b"ext2", b"ext3", b"ext4", b"xfs", b"btrfs", b"squashfs", b"erofs", b"fuseblk",
               b"vfat", b"iso9660")
PAGE = 4096
TYPES = {MS_SHARED: SHARED, MS_PRIVATE: PRIVATE, MS_SLAVE: SLAVE, MS_UNBINDABLE: UNBINDABLE}


def may_mount(ctx) -> None:
    """may_mount(): CAP_SYS_ADMIN; a Landlock domain refuses every mount change (EPERM)."""
    if not ctx.proc.creds.capable(CAP_SYS_ADMIN) or ctx.thread.task_flags.landlock is not None:
        raise GuestErrno(E.EPERM)


def optional_string(ctx, addr: int, limit: int = PAGE - 1) -> bytes | None:
    """copy_mount_string: NULL stays NULL."""
    return None if addr == 0 else ctx.read_cstr(addr, limit)


@syscall("mount", args=(("source", K.PTR), ("target", K.PATH), ("filesystemtype", K.PTR),
                        ("mountflags", K.HEX), ("data", K.PTR)))
def sys_mount(ctx, source, target, filesystemtype, mountflags, data):
    fstype = optional_string(ctx, filesystemtype)
    dev_name = optional_string(ctx, source)
    options = ctx.read_cstr(data, PAGE - 1) if data else b""
    path = ctx.read_path(target)
    flags = mountflags & 0xFFFFFFFF
    if flags & MS_MGC_MSK == MS_MGC_VAL:
        flags &= ~MS_MGC_MSK                        # discard the old magic
    if flags & MS_NOUSER:
        raise GuestErrno(E.EINVAL)
    may_mount(ctx)
    fs, view = ctx.kernel.fs, fs_view(ctx)
    where = mount_points.mount_target(fs, path, ctx.proc.cwd, view)
    ns = mount_points.namespace(fs, view)
    mnt_flags = mnt_flags_of(flags)
    if flags & MS_REMOUNT and not flags & MS_ATIME:     # a remount keeps the atime flags
        mnt_flags = mnt_flags & ~ATIME | flags_of_options(mounted_at(ns, where.path).options) \
            & ATIME
    if flags & (MS_REMOUNT | MS_BIND) == MS_REMOUNT | MS_BIND:
        return _reconfigure(ctx, ns, where, mnt_flags)
    if flags & MS_REMOUNT:
        return _remount(ctx, ns, where, flags, mnt_flags)
    if flags & MS_BIND:
        return _bind(ctx, ns, where, dev_name, bool(flags & MS_REC), mnt_flags)
    if flags & PROPAGATION:
        return change_type(ns, where.path, flags & ~(MS_REC | MS_SILENT), bool(flags & MS_REC))
    if flags & MS_MOVE:
        return _move(ctx, ns, where, dev_name)
    return _new_mount(ctx, ns, where, fstype, dev_name, options, mnt_flags, flags)


def mounted_at(ns, path: bytes):
    """path_mounted(): the topmost mount whose root `path` names (EINVAL if none)."""
    mount = ns.at(path)
    if mount is None:
        raise GuestErrno(E.EINVAL)
    return mount


def _new_mount(ctx, ns, where, fstype, dev_name, options, mnt_flags, flags) -> int:
    """do_new_mount: the type, then its superblock (vfs_get_tree), then do_add_mount."""
    if not fstype:
        raise GuestErrno(E.EINVAL)
    kind = MODELED.get(fstype)
    if kind is None:
        if fstype in BLOCK_TYPES:
            _block_source(ctx, dev_name)
        raise GuestErrno(E.ENODEV)
    if not where.node.is_dir:
        raise GuestErrno(E.ENOTDIR)
    fs = ctx.kernel.fs
    sb = mount_points.new_superblock(fs, kind, options)
    sb.read_only = bool(flags & MS_RDONLY)
    ns.attach(_mount_of(ns, where.path, sb.root, sb, fstype, dev_name or b"none", mnt_flags))
    return 0


def _mount_of(ns, point, root, sb, fstype, source, mnt_flags, root_path=b"/"):
    parent = ns.containing(point)
    return Mount(ns.counters.mount_id(), parent.id, point, root, fstype, source,
                 options_text(mnt_flags), sb.super_options(), sb.dev, root_path, superblock=sb)


def _block_source(ctx, dev_name) -> None:
    """get_tree_bdev: the source must name a block device, which the sandbox has none of."""
    if not dev_name:
        raise GuestErrno(E.EINVAL)
    node = mount_points.mount_target(ctx.kernel.fs, dev_name, ctx.proc.cwd,
                                     fs_view(ctx)).node
    if node.stat().mode & S_IFMT != S_IFBLK:
        raise GuestErrno(E.ENOTBLK)
    raise GuestErrno(E.ENXIO)


def _bind(ctx, ns, where, dev_name, recurse: bool, mnt_flags: int) -> int:
    """do_loopback: the source's directory (or file) shown at the target, as a mount of the
    source's file system; with MS_REC the mounts beneath the source come along."""
    if not dev_name:
        raise GuestErrno(E.EINVAL)
    source = mount_points.mount_target(ctx.kernel.fs, dev_name, ctx.proc.cwd, fs_view(ctx))
    old = ns.containing(source.path)
    if old.propagation == UNBINDABLE:
        raise GuestErrno(E.EINVAL)
    if where.node.is_dir != source.node.is_dir:
        raise GuestErrno(E.ENOTDIR)                 # graft_tree
    inside = source.path[len(old.point):] if old.point != b"/" else source.path
    root_path = _join(old.root_path, inside)
    # clone_mnt: the source mount's flags; a shared one's copy is its peer, a slave's a
    # slave of the same master
    top = replace(old, id=ns.counters.mount_id(), parent=ns.containing(where.path).id,
                  point=where.path, root=source.node, root_path=root_path)
    if top.propagation == UNBINDABLE:
        top.propagation = PRIVATE
    ns.attach(top)
    if recurse:
        _copy_beneath(ns, source.path, where.path, top)
    return 0


def _copy_beneath(ns, source: bytes, target: bytes, top) -> None:
    """copy_tree: each mount beneath the source again beneath the target."""
    ids = {}
    for mount in list(ns.mounts):
        if mount is top or not mount.point.startswith(source.rstrip(b"/") + b"/"):
            continue
        copy = replace(mount, id=ns.counters.mount_id(),
                       point=target.rstrip(b"/") + mount.point[len(source.rstrip(b"/")):])
        copy.parent = ids.get(mount.parent, top.id)
        ids[mount.id] = copy.id
        ns.attach(copy)


def _join(base: bytes, inside: bytes) -> bytes:
    joined = base.rstrip(b"/") + inside
    return joined or b"/"


def change_type(ns, path: bytes, flags: int, recurse: bool) -> int:
    """do_change_type: exactly one propagation type; MS_SHARED gives each mount that has
    none a new peer group (invent_group_ids); MS_SLAVE makes a mount with peers a slave of
    their group and one without private (change_mnt_propagation)."""
    kind = TYPES.get(flags)
    top = mounted_at(ns, path)
    if kind is None:
        raise GuestErrno(E.EINVAL)
    for mount in ns.subtree(top) if recurse else [top]:
        set_propagation(ns, mount, kind)
    return 0


def set_propagation(ns, mount, kind: str) -> None:
    if kind == SHARED:
        if mount.propagation != SHARED:
            mount.group = ns.counters.group()
        mount.propagation = SHARED
    elif kind == SLAVE:
        peers = mount.propagation == SHARED and any(
            m.group == mount.group and m is not mount for m in ns.mounts)
        if peers or mount.propagation == SLAVE:
            mount.master = mount.master if mount.propagation == SLAVE else mount.group
            mount.propagation, mount.group = SLAVE, 0
        else:
            mount.propagation, mount.group = PRIVATE, 0
    else:
        mount.propagation, mount.group, mount.master = kind, 0, 0


def _reconfigure(ctx, ns, where, mnt_flags: int) -> int:
    """do_reconfigure_mnt: the mount's own flags, its superblock unchanged; making it
    read-only while a file is open for writing through it is EBUSY (mnt_make_readonly)."""
    mount = mounted_at(ns, where.path)
    if mnt_flags & MNT_READONLY and not mount.read_only and _writers(ctx, mount, True):
        raise GuestErrno(E.EBUSY)
    mount.options = options_text(mnt_flags)
    return 0


def _remount(ctx, ns, where, flags: int, mnt_flags: int) -> int:
    """do_remount: the superblock's read-only flag (EBUSY while one of its files is open
    for writing: sb_prepare_remount_readonly) and the mount's flags. The sandbox's own
    mounts keep their superblock: MS_RDONLY makes the mount read-only in this namespace."""
    mount = mounted_at(ns, where.path)
    sb = mount.superblock
    if sb is None:
        mount.options = options_text(mnt_flags)
        return 0
    if flags & MS_RDONLY and not sb.read_only and _writers(ctx, mount, False):
        raise GuestErrno(E.EBUSY)
    sb.read_only = bool(flags & MS_RDONLY)           # every mount of it, in every namespace
    mount.options = options_text(mnt_flags)
    return 0


def _writers(ctx, mount, through_mount: bool) -> bool:
    """A file of the mount's file system is open for writing (through this mount: its
    path beneath the mount point)."""
    beneath = mount.point.rstrip(b"/") + b"/"
    for proc in ctx.kernel.processes.values():
        for entry in proc.fds.entries.values():
            f = entry.file
            node = getattr(f, "node", None)
            if node is None or not wants_write(getattr(f, "flags", 0)):
                continue
            if mount.superblock is not None and getattr(node, "ctx", None) is not \
                    mount.superblock.root.ctx:
                continue
            if not through_mount or f.path == mount.point or f.path.startswith(beneath):
                return True
    return False


def _move(ctx, ns, where, dev_name) -> int:
    """do_move_mount_old: a mount (with those beneath it) to another place."""
    if not dev_name:
        raise GuestErrno(E.EINVAL)
    source = mount_points.mount_target(ctx.kernel.fs, dev_name, ctx.proc.cwd, fs_view(ctx))
    mount = mounted_at(ns, source.path)
    if mount.root is None:
        raise GuestErrno(E.EINVAL)                  # the sandbox's own three stay
    target = where.path
    if target == mount.point or target.startswith(mount.point + b"/"):
        raise GuestErrno(E.ELOOP)
    old, parent = mount.point, ns.containing(target).id
    for m in ns.subtree(mount):
        m.point = target + m.point[len(old):]
    mount.parent = parent
    ns.refresh()
    return 0

