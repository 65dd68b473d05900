"""The file system's part for mounts the guest makes (a mixin of filesystem.py): which mount
namespace a process resolves in, the superblocks of the tmpfs and hugetlbfs mounts
(tmpfs.py), and /proc/PID/mounts and mountinfo from the namespace (mount_table.py).

A process that never mounts and never unshares its namespace makes none of this: the initial
namespace is built when first asked, and until then a walk has no mount points to look up
(the modules are imported then, not at start-up).
"""
import functools

from .. import errno as E
from ..errno import GuestErrno
from .nsfs import KINDS


class MountPoints:
    """Mixed into FileSystem (it uses _resolve and the shm mount's clock and budget)."""

    def mount_points(self, proc) -> dict | None:
        """The caller's namespace's mount points (None before any namespace was made)."""
        ns = getattr(proc, "mount_ns", None) or self.__dict__.get("initial_mount_ns")
        return ns.points if ns is not None else None

    @functools.cached_property
    def initial_mount_ns(self):
        from .mount_table import Counters, MountNamespace
        return MountNamespace.initial(Counters(), KINDS[b"mnt"][1])

    def mount_namespace(self, proc):
        return getattr(proc, "mount_ns", None) or self.initial_mount_ns

    @functools.cached_property
    def superblocks(self) -> dict:
        """st_dev -> tmpfs.Superblock of each file system the guest mounted (statfs asks)."""
        return {}

    def superblock_of(self, dev: int):
        """The superblock of a file system the guest mounted with that st_dev, if any."""
        return self.__dict__.get("superblocks", {}).get(dev)

    @functools.cached_property
    def _anon_devices(self):
        from .tmpfs import AnonDevices
        return AnonDevices()

    def new_superblock(self, fstype: bytes, data: bytes):
        """A new tmpfs or hugetlbfs (vfs_get_tree of a nodev type)."""
        from .tmpfs import make_superblock
        ctx = self._shm.ctx
        sb = make_superblock(fstype, data, self._anon_devices.take(), ctx.clock, ctx.budget)
        self.superblocks[sb.dev] = sb
        return sb

    def mount_target(self, path: bytes, cwd: bytes, proc, follow: bool = True):
        """The directory or file a mount call names (user_path_at with LOOKUP_FOLLOW): a
        Resolved that exists. A magic link to a file no path reaches is ENOENT, as Linux's
        lookup of such a link's target gives (d_unlinked: LTP mount08)."""
        r = self._resolve(path, cwd, proc, follow=False, stop_at_fd_links=True)
        if r.node is not None and r.node.fd is not None and not r.fd_link:
            opened = getattr(self._fd_file(r, proc), "node", None)
            if opened is not None and opened.is_symlink:    # an O_PATH descriptor of a link
                raise GuestErrno(E.ENOENT)
        if follow:
            r = self._resolve(path, cwd, proc, stop_at_fd_links=True)
        if r.fd_link or r.node is None:
            raise GuestErrno(E.ENOENT)
        return r

    def check_writable(self, r, proc, other=None) -> None:
        """mnt_want_write (and inode_permission's IS_RDONLY): a change under a read-only
        mount, or on a read-only superblock, is EROFS. `other`: a second name (rename's)."""
        ns = getattr(proc, "mount_ns", None) or self.__dict__.get("initial_mount_ns")
        if ns is None or not ns.any_read_only():
            return
        for resolved in (r, other) if other is not None else (r,):
            if ns.containing(resolved.path).read_only:
                raise GuestErrno(E.EROFS)

    def mount_text(self, proc, info: bool) -> bytes:
        """/proc/PID/mountinfo (info) or /proc/PID/mounts of `proc`'s namespace."""
        ns = self.mount_namespace(proc)
        root = proc.root() if hasattr(proc, "root") else b"/"
        return ns.mountinfo(root) if info else ns.mounts_text(root)
