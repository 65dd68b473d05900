"""/dev: the device files common programs open, modeled (never the host's devices).

Mounted over the rootfs's /dev the way devtmpfs is. Device numbers are Linux's
(Documentation/admin-guide/devices.txt): mem major 1 (null 3, zero 5, random 8, urandom 9),
tty 5/0. /dev/stdin, stdout, stderr and fd are the symlinks udev/systemd create.
"""
from dataclasses import replace
from typing import Callable

from .. import errno as E
from ..errno import GuestErrno
from .constants import DEVTMPFS_DEV, S_IFCHR, S_IFDIR, S_IFLNK, makedev
from .inodes import InodeTable
from .node import Node
from .records import StatResult
from .randomstream import DeterministicRandom
from .synthetic import SyntheticDir, SyntheticNode, SyntheticSymlink, synthetic_meta


class CharDevice(SyntheticNode):
    """A character device; it is its own Handle (it has no per-open state).

    lseek on these devices succeeds and leaves the position at 0 (drivers/char/mem.c gives
    null/zero `null_lseek`, random.c `noop_llseek`), hence fixed_offset."""

    fixed_offset = True
    splice_read = True          # sendfile may read it (mem.c's zero, random.c's devices)

    def __init__(self, meta, read: Callable[[int], bytes]):
        super().__init__("dev", meta)
        self._read = read

    def open_handle(self, flags: int) -> "CharDevice":
        return self

    def read_at(self, offset: int, n: int) -> bytes:
        return self._read(n)

    def write_at(self, offset: int, data: bytes) -> int:
        return len(data)          # null/zero discard; random "mixes into the pool"

    def size(self) -> int:
        return 0

    def truncate(self, length: int) -> None:
        raise GuestErrno(E.EINVAL)

    def close(self) -> None:
        """Nothing is held per open."""

    def chmod(self, mode: int) -> None:
        self.meta.mode = self.fmt | (mode & 0o7777)
        if self.meta.xattrs is not None:
            self.meta.xattrs.chmod(mode)            # posix_acl_chmod

    def chown(self, uid: int, gid: int) -> None:
        self.meta.chown(uid, gid, self.meta.ctime_ns)

    def utimens(self, atime_ns: int | None, mtime_ns: int | None) -> None:
        if atime_ns is not None:
            self.meta.atime_ns = atime_ns
        if mtime_ns is not None:
            self.meta.mtime_ns = mtime_ns


class NullDevice(CharDevice):
    """/dev/null: null_fops (drivers/char/mem.c) has no splice_read, so sendfile from it
    fails with EINVAL."""

    splice_read = False


class NoDriverDevice(CharDevice):
    """/dev/tty: the guest has no controlling terminal, so opening it fails with ENXIO
    (drivers/tty/tty_io.c: tty_open_current_tty)."""

    def open_handle(self, flags: int) -> "CharDevice":
        raise GuestErrno(E.ENXIO)


class RandomDevice(CharDevice):
    """/dev/random and /dev/urandom: their ioctls are random.c's (random_device.py)."""

    def ioctl(self, ctx, request: int, arg: int) -> int:
        from .random_device import random_ioctl      # on first use, not at start-up
        return random_ioctl(ctx, request, arg)


class PtmxDevice(CharDevice):
    """/dev/ptmx (5:2), and /dev/pts/ptmx: each open makes a pseudo-terminal pair (pty.py) and
    is its master (drivers/tty/pty.c ptmx_open); open(2) asks `open_tty` for the description."""

    def __init__(self, meta, devpts: "Devpts"):
        super().__init__(meta, _nothing)
        self.devpts = devpts

    def open_tty(self, ctx, path: bytes, flags: int):
        from .pty import PtyEnd                     # a terminal's modules, at the first one
        return PtyEnd(self.devpts.new_pair(ctx, self), True, flags, path)


class PtsNode(CharDevice):
    """/dev/pts/N (136:N): opening it opens the pair's slave; EIO while the pair is locked
    (pty_open: TTY_PTY_LOCK)."""

    def __init__(self, meta):
        super().__init__(meta, _nothing)
        self.pair = None

    def open_tty(self, ctx, path: bytes, flags: int):
        from .pty import PtyEnd
        if self.pair.locked or self.pair.hung_up:
            raise GuestErrno(E.EIO)
        return PtyEnd(self.pair, False, flags, path)


class Devpts(SyntheticDir):
    """/dev/pts, a devpts instance (fs/devpts/inode.c) mounted as the host's is (mode=600,
    ptmxmode=000): its ptmx, and a node per live pair, numbered from 0 by the lowest free
    index, owned by the opener's fsuid and fsgid, inode index + 3."""

    def __init__(self, meta):
        super().__init__("dev", meta)
        self.ptmx = PtmxDevice(_devpts_meta(2, S_IFCHR, 0, makedev(5, 2)), self)
        self.pairs: dict[int, object] = {}

    def children(self) -> dict[bytes, Node]:
        nodes = {b"ptmx": self.ptmx}
        nodes.update((b"%d" % index, pair.slave_node) for index, pair in self.pairs.items())
        return nodes

    def new_pair(self, ctx, master_node):
        from .pty import PtyPair
        index = next(i for i in range(len(self.pairs) + 1) if i not in self.pairs)
        node = PtsNode(_devpts_meta(index + 3, S_IFCHR, 0o600, makedev(136, index)))
        creds = ctx.proc.creds
        node.meta.chown(creds.fsuid, creds.fsgid, node.meta.ctime_ns)
        pair = PtyPair(index, ctx.kernel.wakeup, node, master_node, self._release)
        node.pair = pair
        self.pairs[index] = pair
        return pair

    def _release(self, pair) -> None:
        self.pairs.pop(pair.index, None)


DEVPTS_DEV = makedev(0, 25)


def _devpts_meta(ino: int, fmt: int, perm: int, rdev: int = 0):
    meta = synthetic_meta(DEVPTS_DEV, ino, fmt, perm)
    meta.rdev = rdev
    return meta


class UserfaultfdDevice(CharDevice):
    """/dev/userfaultfd (misc 10:126, root's alone): its one ioctl, USERFAULTFD_IOC_NEW, makes
    a userfaultfd as userfaultfd(2) does (fs/userfaultfd.c userfaultfd_dev_ioctl); ioctl(2)
    hands it to syscalls/impls/userfaultfd.py device_ioctl, since the file system does not
    reach up to the calls."""


def _zeros(n: int) -> bytes:
    return bytes(n)


def _nothing(n: int) -> bytes:
    return b""


# mm/shmem.c: a tmpfs directory's size counts BOGO_DIRENT_SIZE bytes for each entry and two
# for "." and ".." (shmem_get_inode, shmem_mknod), its links two and one per subdirectory.
BOGO_DIRENT_SIZE = 20


class DevtmpfsRoot(SyntheticDir):
    """/dev's root as devtmpfs (a tmpfs) shows it: what strace -v and ls -ld see."""

    def stat(self) -> StatResult:
        children = self.children().values()
        return replace(self.meta.to_stat(0), size=BOGO_DIRENT_SIZE * (2 + len(children)),
                       blocks=0, nlink=2 + sum(1 for child in children if child.is_dir))


def build_dev(random: DeterministicRandom, shm: Node | None = None) -> SyntheticDir:
    """/dev: the character devices programs open, the fd links, and `shm` (shmfs.py)."""
    table = InodeTable(first=1)
    root_meta = synthetic_meta(DEVTMPFS_DEV, table.fresh(), S_IFDIR, 0o755)

    def device(major: int, minor: int, read, cls=CharDevice, mode: int = 0o666) -> CharDevice:
        meta = synthetic_meta(DEVTMPFS_DEV, table.fresh(), S_IFCHR, mode)
        meta.rdev = makedev(major, minor)
        return cls(meta, read)

    def link(target: bytes) -> SyntheticSymlink:
        meta = synthetic_meta(DEVTMPFS_DEV, table.fresh(), S_IFLNK, 0o777)
        return SyntheticSymlink("dev", meta, lambda: target)

    devpts = Devpts(_devpts_meta(1, S_IFDIR, 0o755))
    children = {
        b"null": device(1, 3, _nothing, NullDevice),
        b"zero": device(1, 5, _zeros),
        b"random": device(1, 8, random.read, RandomDevice),
        b"urandom": device(1, 9, random.read, RandomDevice),
        b"tty": device(5, 0, _nothing, NoDriverDevice),
        b"ptmx": PtmxDevice(device(5, 2, _nothing).meta, devpts),
        b"pts": devpts,
        b"userfaultfd": device(10, 126, _nothing, UserfaultfdDevice, 0o600),
        b"fd": link(b"/proc/self/fd"),
        b"stdin": link(b"/proc/self/fd/0"),
        b"stdout": link(b"/proc/self/fd/1"),
        b"stderr": link(b"/proc/self/fd/2"),
    }
    if shm is not None:
        children[b"shm"] = shm
    return DevtmpfsRoot("dev", root_meta, children)


def char_driver(dev_root, node: Node):
    """The devfs device a character device node of another mount opens: the one with its
    number (chrdev_open finds the driver by the number, not by the node)."""
    if node.fmt != S_IFCHR or node.mount == "dev":
        return None
    rdev = node.stat().rdev
    return next((dev for _, dev in dev_root.entries()
                 if dev.fmt == S_IFCHR and dev.stat().rdev == rdev), None)
