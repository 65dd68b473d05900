"""Mount namespaces: the mounts a process sees (fs/namespace.c, fs/mount.h struct mnt_namespace).

A namespace is its list of mounts in the order they were made, each on a mount point named by
its global canonical path (the model's paths are global: a chrooted process's too, namei.py).
Path resolution asks `points` (mount point -> the root of the topmost mount there) as it
enters each directory, so a mount hides what is beneath it and `..` at a mount's root climbs
back to the mount point's parent (follow_dotdot). The rootfs, /proc and /dev are the first
three mounts of every namespace, whose roots the file system itself provides (mountinfo.py's
MOUNTS); a namespace made by unshare(CLONE_NEWNS) or clone(CLONE_NEWNS) is a copy of its
parent's (copy_mnt_ns: copy_tree of every mount, new ids; a shared mount's copy is a peer of
it, in the same group).

Propagation (MS_SHARED, MS_PRIVATE, MS_SLAVE, MS_UNBINDABLE) is recorded and shown in
/proc/PID/mountinfo's optional fields (shared:N, master:N, unbindable); events do not travel
between peers: a mount made under a shared mount is not copied to its peers.
"""
from dataclasses import dataclass, field, replace

from .mountinfo import MOUNTS, major_minor

PRIVATE, SHARED, SLAVE, UNBINDABLE = "private", "shared", "slave", "unbindable"


@dataclass
class Mount:
    id: int
    parent: int
    point: bytes                       # global canonical path of the mount point
    root: object                       # the mounted directory's Node (None: the fs's own)
    fstype: bytes
    source: bytes
    options: bytes                     # per-mount flags as shown: rw,nosuid,relatime...
    super_options: bytes
    dev: int
    root_path: bytes = b"/"            # a bind mount's directory within its file system
    propagation: str = PRIVATE
    group: int = 0                     # peer group of a shared mount
    master: int = 0                    # the group a slave receives from
    superblock: object = None          # the tmpfs.Superblock of a mount the guest made
    expiry_mark: bool = False          # umount2(MNT_EXPIRE) asked once

    @property
    def read_only(self) -> bool:
        """MNT_READONLY or a read-only superblock (sb_rdonly)."""
        return self.options.startswith(b"ro") or self.shown_super_options.startswith(b"ro")

    @property
    def shown_super_options(self) -> bytes:
        """The superblock's options as they are now (one superblock for all its mounts, in
        every namespace); the sandbox's own mounts' are fixed."""
        return self.super_options if self.superblock is None else \
            self.superblock.super_options()

    def info_line(self, point: bytes) -> bytes:
        """show_mountinfo's line, the mount point as the reader sees it."""
        optional = b""
        if self.propagation == SHARED:
            optional = b" shared:%d" % self.group
        elif self.propagation == SLAVE:
            optional = b" master:%d" % self.master
        elif self.propagation == UNBINDABLE:
            optional = b" unbindable"
        return b"%d %d %d:%d %s %s %s%s - %s %s %s\n" % (
            self.id, self.parent, *major_minor(self.dev), self.root_path, point, self.options,
            optional, self.fstype, self.source, self.shown_super_options)

    def mounts_line(self, point: bytes) -> bytes:
        """show_vfsmnt's line: source, point, type, the super and mount options, 0 0."""
        extra = self.shown_super_options.partition(b",")[2]
        options = self.options + (b"," + extra if extra else b"")
        return b"%s %s %s %s 0 0\n" % (self.source, point, self.fstype, options)


@dataclass
class Counters:
    """The machine-wide numbering: mount ids (mnt_id_ida) and peer groups (mnt_group_ida)."""
    next_id: int = len(MOUNTS) + 1
    next_group: int = 1

    def mount_id(self) -> int:
        self.next_id += 1
        return self.next_id - 1

    def group(self) -> int:
        self.next_group += 1
        return self.next_group - 1


@dataclass
class MountNamespace:
    counters: Counters
    inum: int
    mounts: list = field(default_factory=list)
    points: dict = field(default_factory=dict)      # global path -> the mounted root reached

    @classmethod
    def initial(cls, counters: Counters, inum: int) -> "MountNamespace":
        ns = cls(counters, inum)
        for mount_id, parent, dev, point, options, kind, source, super_options in MOUNTS:
            ns.mounts.append(Mount(mount_id, parent, point, None, kind, source, options,
                                   super_options, dev))
        return ns

    def copy(self, inum: int) -> "MountNamespace":
        """copy_mnt_ns: every mount copied with a new id; a shared mount's copy joins its
        group (CL_SHARED_TO_SLAVE is for unprivileged copies only)."""
        ns = MountNamespace(self.counters, inum)
        ids = {}
        for mount in self.mounts:
            ids[mount.id] = self.counters.mount_id()
            ns.mounts.append(replace(mount, id=ids[mount.id], parent=ids.get(mount.parent,
                                                                             ids[mount.id])))
        ns.refresh()
        return ns

    @property
    def root_mount(self) -> Mount:
        return self.mounts[0]

    @property
    def visible(self) -> dict:
        """Mount point -> the mount a walk reaches there (refresh's)."""
        if "_visible" not in self.__dict__:
            self.refresh()
        return self.__dict__["_visible"]

    def at(self, point: bytes) -> Mount | None:
        """The mount whose root a walk to `point` reaches, if `point` is a mount point."""
        return self.visible.get(point)

    def containing(self, path: bytes) -> Mount:
        """The mount a path is on: the reachable one whose point is the longest prefix."""
        best = self.root_mount
        for point, mount in self.visible.items():
            if _under(path, point) and len(point) >= len(best.point):
                best = mount
        return best

    def any_read_only(self) -> bool:
        return any(mount.read_only for mount in self.visible.values())

    def children(self, mount: Mount) -> list:
        return [m for m in self.mounts if m.parent == mount.id and m is not mount]

    def subtree(self, mount: Mount) -> list:
        """The mount and every mount beneath it, parents first."""
        found = [mount]
        for m in self.mounts:
            if m.parent in {f.id for f in found} and m not in found:
                found.append(m)
        return found

    def attach(self, mount: Mount) -> None:
        self.mounts.append(mount)
        self.refresh()

    def detach(self, mounts: list) -> None:
        self.mounts = [m for m in self.mounts if m not in mounts]
        self.refresh()

    def refresh(self) -> None:
        """What resolution sees at each mount point (lookup_mnt as the walk crosses each):
        from the root mount, a child mount on the same point as its parent is stacked on it
        and hides it, with the mounts beneath the hidden one; otherwise each child is reached
        at its point. The first three's roots are the file system's own (None in points)."""
        children: dict = {}
        for mount in self.mounts[1:]:
            children.setdefault(mount.parent, []).append(mount)
        visible = {}
        pending = [self.root_mount]
        while pending:
            mount = pending.pop()
            mine = children.get(mount.id, [])
            stacked = [c for c in mine if c.point == mount.point and c is not mount]
            if stacked:
                pending.append(stacked[-1])
                continue
            visible[mount.point] = mount
            latest = {c.point: c for c in mine if c is not mount}
            pending.extend(latest.values())
        self._visible = visible
        self.points = {point: m.root for point, m in visible.items() if m.root is not None}

    def mountinfo(self, root: bytes) -> bytes:
        return b"".join(m.info_line(shown) for m, shown in self._shown(root))

    def mounts_text(self, root: bytes) -> bytes:
        return b"".join(m.mounts_line(shown) for m, shown in self._shown(root))

    def _shown(self, root: bytes):
        """Each mount and its point as seen from a process root (seq_path_root): the mounts
        the guest made outside the root are not shown."""
        for mount in self.mounts:
            if mount.root is None or root == b"/":
                yield mount, mount.point
            elif _under(mount.point, root):
                yield mount, mount.point[len(root):] or b"/"


def _under(path: bytes, top: bytes) -> bool:
    return top == b"/" or path == top or path.startswith(top + b"/")
