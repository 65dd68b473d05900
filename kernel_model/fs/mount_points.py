"""The file system's mounts the guest makes: which mount namespace a process is in, the
superblocks of its tmpfs and hugetlbfs mounts (tmpfs.py), a mount call's target, and
/proc/PID/mounts, mountinfo and statx's mount id from the namespace (mount_table.py).

A process that never mounts and never asks for a namespace makes none of this: the initial
namespace is built when first asked (kept in the FileSystem as `initial_mount_ns`, which its
walk and its EROFS check read), and this module is imported then, not at start-up.
"""
from .. import errno as E
from ..errno import GuestErrno
from .constants import DEVTMPFS_DEV
from .mount_table import Counters, MountNamespace
from .mountinfo import mount_id_of
from .nsfs import KINDS
from .shmfs import SHM_DEV


def namespace(fs, proc) -> MountNamespace:
    """The caller's mount namespace (the initial one, made now if need be)."""
    ns = getattr(proc, "mount_ns", None)
    if ns is not None:
        return ns
    if "initial_mount_ns" not in fs.__dict__:
        fs.initial_mount_ns = MountNamespace.initial(Counters(), KINDS[b"mnt"][1])
    return fs.initial_mount_ns


def superblocks(fs) -> dict:
    """st_dev -> tmpfs.Superblock of each file system the guest mounted."""
    return fs.__dict__.setdefault("superblocks", {})


def superblock_of(fs, dev: int):
    """The superblock of a file system the guest mounted with that st_dev, if any (statfs
    asks; None without importing anything when the guest mounted none)."""
    return fs.__dict__.get("superblocks", {}).get(dev)


def new_superblock(fs, fstype: bytes, data: bytes):
    """A new tmpfs or hugetlbfs (vfs_get_tree of a nodev type), in the run's data budget."""
    from .tmpfs import AnonDevices, make_superblock
    devices = fs.__dict__.setdefault("anon_devices", AnonDevices())
    ctx = fs._shm.ctx
    sb = make_superblock(fstype, data, devices.take(), ctx.clock, ctx.budget)
    superblocks(fs)[sb.dev] = sb
    return sb


def mount_target(fs, path: bytes, cwd: bytes, proc, follow: bool = True):
    """The directory or file a mount call names (user_path_at with LOOKUP_FOLLOW): a
    Resolved that exists. A magic link to an O_PATH descriptor of a link is ENOENT, as
    Linux's lookup of it gives (LTP mount08)."""
    r = fs._resolve(path, cwd, proc, follow=False, stop_at_fd_links=True)
    if r.node is not None and r.node.fd is not None and not r.fd_link:
        opened = getattr(fs._fd_file(r, proc), "node", None)
        if opened is not None and opened.is_symlink:
            raise GuestErrno(E.ENOENT)
    if follow:
        r = fs._resolve(path, cwd, proc, stop_at_fd_links=True)
    if r.fd_link or r.node is None:
        raise GuestErrno(E.ENOENT)
    return r


def mount_id(fs, dev: int, proc) -> int:
    """statx's stx_mnt_id: the id of the caller's mount of that device (mountinfo.py's fixed
    ids while no namespace exists; /dev/shm counts as /dev's)."""
    ns = getattr(proc, "mount_ns", None) or fs.__dict__.get("initial_mount_ns")
    if ns is None:
        return mount_id_of(dev)
    dev = DEVTMPFS_DEV if dev == SHM_DEV else dev
    found = [m.id for m in ns.visible.values() if m.dev == dev]
    return found[0] if found else ns.root_mount.id


def mount_text(fs, proc, info: bool) -> bytes:
    """/proc/PID/mountinfo (info) or /proc/PID/mounts of `proc`'s namespace."""
    root = proc.root() if hasattr(proc, "root") else b"/"
    ns = namespace(fs, proc)
    return ns.mountinfo(root) if info else ns.mounts_text(root)
