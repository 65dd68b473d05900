"""The modeled mounts by id: /proc/PID/mountinfo (fs/proc_namespace.c show_mountinfo) and the
mount id statx, fdinfo and name_to_handle_at give a file.

The sandbox's own mounts are /proc/PID/mounts' (procfs.py MOUNTS): the rootfs (id 1, its own
parent: the namespace's root), /proc and /dev on it; every mount namespace begins with them
(mount_table.py, which lists the mounts the guest makes after them). A file's mount is found
by its device number; /dev/shm, a tmpfs of its own device that /proc/mounts does not list,
counts as /dev's.
"""
from .constants import DEVTMPFS_DEV, PROC_DEV, ROOTFS_DEV
from .shmfs import SHM_DEV

# (id, parent id, device, mount point, options, type, source, super options)
MOUNTS = (
    (1, 1, ROOTFS_DEV, b"/", b"rw,relatime", b"overlay", b"overlay", b"rw"),
    (2, 1, PROC_DEV, b"/proc", b"rw,nosuid,nodev,noexec,relatime", b"proc", b"proc", b"rw"),
    (3, 1, DEVTMPFS_DEV, b"/dev", b"rw,nosuid,relatime", b"devtmpfs", b"devtmpfs",
     b"rw,mode=755"),
)
ROOT_MOUNT_ID = 1
FIRST_ANON_MINOR = 64           # the devices of the file systems the guest mounts (tmpfs.py)
# The inode number of each mounted file system's root: ext4's EXT4_ROOT_INO for the rootfs,
# PROC_ROOT_INO, and a tmpfs's first inode (inodes.py numbers them so). /dev/shm is a tmpfs
# mount of its own, as on the host whose /dev the native runs bind.
_ROOT_INODES = {ROOTFS_DEV: 2, PROC_DEV: 1, DEVTMPFS_DEV: 1, SHM_DEV: 1}


def is_mount_root(dev: int, ino: int) -> bool:
    """Whether the inode is the root of its mount (fs/namespace.c path_mounted): the
    sandbox's own mounts by their roots' numbers, a tmpfs or hugetlbfs the guest mounted by
    its root's (1; a bind mount of a folder is not told)."""
    major, minor = major_minor(dev)
    if major == 0 and minor >= FIRST_ANON_MINOR:
        return ino == 1
    return _ROOT_INODES.get(dev) == ino


def mount_id_of(dev: int) -> int:
    """The id of the mount a file of device `dev` is on (the rootfs's for one it has no
    line of: a pipe, a socket; /dev's for /dev/shm)."""
    if dev == SHM_DEV:
        dev = DEVTMPFS_DEV
    for mount_id, _, mount_dev, *_ in MOUNTS:
        if mount_dev == dev:
            return mount_id
    return ROOT_MOUNT_ID


def major_minor(dev: int) -> tuple[int, int]:
    """new_decode_dev() of what makedev (constants.py) encodes."""
    return (dev >> 8) & 0xFFF, (dev & 0xFF) | ((dev >> 12) & 0xFFF00)


def mountinfo_text() -> bytes:
    """show_mountinfo's lines: id, parent, major:minor, root, mount point, options, no
    optional fields, "-", type, source, super options."""
    return b"".join(b"%d %d %d:%d / %s %s - %s %s %s\n" % (
        mount_id, parent, *major_minor(dev), point, options, kind, source, super_options)
        for mount_id, parent, dev, point, options, kind, source, super_options in MOUNTS)
