"""The file system the guest sees: a rootfs (overlay or write-through) plus /dev and /proc.

Every call takes the caller's cwd (a canonical guest path) and its ProcessView, because /proc
shows the calling process and relative paths start at its cwd. Errors are GuestErrno with the
errno Linux returns, in the order Linux checks (fs/namei.c, fs/open.c).

Permissions follow the caller's credentials (permission.py: the ProcessView's `creds` and
`groups`, root's without them): search on every directory walked, the access an open asks,
write and search on a directory whose names change, the sticky bit, ownership for chmod,
chown and times; a new inode is the caller's. Root passes them all but executing a file
without an x bit. The caller applies the process's umask to `mode` before calling.
"""
import functools
import os
from typing import Callable

from .. import errno as E
from ..errno import GuestErrno
from ..errors import KernelError
from .constants import (DT_DIR, O_CREAT, O_DIRECTORY, O_EXCL, O_NOFOLLOW, O_PATH,
                        O_TMPFILE_BIT, O_TRUNC, PATH_MAX, S_IFBLK, S_IFCHR, S_IFIFO, S_IFMT,
                        S_IFREG, S_IFSOCK, S_ISGID, S_ISUID, O_ACCMODE, O_RDONLY, O_RDWR,
                        O_WRONLY, dtype_of)
from .databudget import DataBudget
from .fsnotify import IN_ATTRIB, IN_CREATE, IN_MODIFY, Fsnotify
from .devfs import build_dev
from .hostfs import HostContext, host_root_dir
from .inodes import InodeTable
from .namei import LAST_DOT, LAST_DOTDOT, LAST_NORM, Resolved, Walker
from .node import Node, wants_write
from .openfile import OpenFile
from .memfd import F_SEAL_SEAL, O_LARGEFILE, MemFile
from .overlay import overlay_root
from .permission import MAY_EXEC, MAY_READ, MAY_WRITE, Access, access_of, real_access
from .shmfs import build_shm
from .proctext import ProcessView, process_root
from .randomstream import DeterministicRandom
from .records import DirEntry, StatResult

MOUNT_POINTS = (b"dev", b"proc")      # mounted over the rootfs's own /dev and /proc


class FileSystem:
    def __init__(self, root: str | None, *, writable: bool = False, seed: int = 0,
                 clock: Callable[[], int] = lambda: 0):
        if writable and root is None:
            raise KernelError("write-through (writable) needs a rootfs folder, not the host /")
        host_root = os.fsencode(os.path.realpath(root if root is not None else "/"))
        if not os.path.isdir(host_root):
            raise KernelError(f"rootfs is not a directory: {root}")
        self.writable = writable
        self._table = InodeTable()
        # The overlay's file bytes, in the memory budget (databudget.py); the kernel sets
        # `data_budget.allows` to its --memory check and adds `data_budget.used` to it.
        self.data_budget = DataBudget()
        if writable:
            context = HostContext(self._table, clock, writable=True)
            self._root: Node = host_root_dir(context, host_root)
        else:
            self._root = overlay_root(host_root, self._table, clock, self.data_budget)
        self.random = DeterministicRandom(seed)
        self._shm = build_shm(clock, self.data_budget)
        self._dev = build_dev(self.random, self._shm)
        # /proc is built on the first lookup under it (_procfs); until then the kernel's entries
        # wait here, in the dicts the ProcFs then shares (issue 31, start-up: its modules).
        self._sysctl: dict[bytes, Callable[[], bytes]] = {}
        self._proc_files: dict[bytes, Callable[[], bytes]] = {}
        self._processes: Callable[[], dict] | None = None
        self.notify = Fsnotify()          # inotify's watches hear the events (fsnotify.py)

    def add_sysctl(self, path: bytes, text: Callable[[], bytes]) -> None:
        """A /proc/sys entry whose value follows the kernel's state (procsys.py)."""
        self._sysctl[path] = text

    def memfd(self, name: bytes, sealing: bool) -> OpenFile:
        """memfd_create: a new unnamed memory file of the shm mount, open read-write."""
        ctx = self._shm.ctx
        node = MemFile(ctx, ctx.meta(S_IFREG | 0o777), None)
        node.seals = 0 if sealing else F_SEAL_SEAL
        return OpenFile(b"/memfd:" + name + b" (deleted)", O_RDWR | O_LARGEFILE, node,
                        node.open_handle(O_RDWR))

    def add_proc_file(self, path: bytes, text: Callable[[], bytes]) -> None:
        """A /proc file (path relative to /proc) whose text the kernel generates."""
        self._proc_files[path] = text

    def list_processes(self, processes: Callable[[], dict]) -> None:
        """What /proc/PID shows for other processes than the caller: pid -> ProcessView."""
        self._processes = processes
        if "_procfs" in self.__dict__:
            self._procfs.processes = processes

    @functools.cached_property
    def _procfs(self):
        """The /proc mount, made when a path first goes through it."""
        from .procfs import ProcFs
        procfs = ProcFs()
        procfs.sysctl, procfs.files, procfs.processes = self._sysctl, self._proc_files, self._processes
        return procfs

    # --- resolution ----------------------------------------------------------------------------
    def _resolve(self, path: bytes, cwd: bytes, proc: ProcessView, *, follow: bool = True,
                 parent_op: bool = False, stop_at_fd_links: bool = False,
                 search_as: Access | None = None) -> Resolved:
        """`search_as`: whose search permission the walk needs (the caller's by default)."""
        walker = Walker(self._root, lambda name: self._mounted(name, proc), process_root(proc),
                        _searcher(search_as or access_of(proc)), getattr(proc, "resolve", 0))
        return walker.resolve(bytes(path), bytes(cwd), follow=follow, parent_op=parent_op,
                              stop_at_fd_links=stop_at_fd_links)

    @staticmethod
    def _fd_file(r: Resolved, proc: ProcessView):
        """The open file behind a /proc/PID/fd/N link to a pipe (or other pathless file)."""
        fd_file = getattr(proc, "fd_file", None)
        if fd_file is None:
            raise GuestErrno(E.ENOENT)
        return fd_file(r.node.fd)

    def _mounted(self, name: bytes, proc: ProcessView) -> Node | None:
        if name == b"dev":
            return self._dev
        if name == b"proc":
            return self._procfs.root(proc)
        return None

    def _existing(self, path: bytes, cwd: bytes, proc: ProcessView, follow: bool = True) -> Node:
        node = self._resolve(path, cwd, proc, follow=follow).node
        if node is None:
            raise GuestErrno(E.ENOENT)
        return node

    def inode(self, path: bytes, cwd: bytes, proc: ProcessView, follow: bool = True) -> Node:
        """The inode `path` names, for calls on the inode itself (xattrs, inotify watches)."""
        r = self._resolve(path, cwd, proc, follow=follow, stop_at_fd_links=True)
        node = getattr(self._fd_file(r, proc), "node", None) if r.fd_link else r.node
        if node is None:        # no such name; or a pipe or socket behind /proc/PID/fd/N
            raise GuestErrno(E.EOPNOTSUPP if r.fd_link else E.ENOENT)
        return node

    @staticmethod
    def _is_mount_point(r: Resolved) -> bool:
        return r.last == LAST_NORM and len(r.chain) == 1 and r.name in MOUNT_POINTS

    # --- open ----------------------------------------------------------------------------------
    def open(self, path: bytes, flags: int, mode: int, cwd: bytes, proc: ProcessView) -> OpenFile:
        if flags & O_TMPFILE_BIT:
            raise GuestErrno(E.EOPNOTSUPP)
        creating = bool(flags & O_CREAT)
        # O_CREAT|O_EXCL never follows a final symlink: the name itself must not exist.
        follow = not flags & O_NOFOLLOW and not (creating and flags & O_EXCL)
        r = self._resolve(path, cwd, proc, follow=follow, stop_at_fd_links=True)
        if r.fd_link:
            return self._fd_file(r, proc)
        node = r.node
        if node is None:
            if not creating:
                raise GuestErrno(E.ENOENT)
            if r.trailing_slash:
                raise GuestErrno(E.EISDIR)
            node = self._made(r, proc, lambda: r.parent.create(r.name, mode & 0o7777))
            self.notify.name_event(r.parent, IN_CREATE, r.name, False)
        else:
            self._check_open_existing(node, flags, creating)
            if not flags & O_PATH:
                access_of(proc).check(node.stat(), open_mask(flags))
        if flags & O_PATH or node.is_fifo:
            # A fifo has no data in the file system: the caller opens its pipe
            # (kernel_model/fs/fifo.py, Linux's fifo_open in fs/pipe.c). The description shows
            # what it opened, whatever is renamed or planted around it later (Node.pin).
            return OpenFile(r.path, flags, node.pin(), None)
        if node.is_dir:
            listed = OpenFile(r.path, flags, node.pin(), None, self._lister(r, proc))
            return self.notify.opened(listed, r.parent, r.name)
        handle = node.open_handle(flags)
        if flags & O_TRUNC and wants_write(flags) and node.is_regular:
            handle.truncate(0)
            if r.node is not None:              # a file just created is not truncated
                self.notify.inode_event(node, IN_MODIFY, self.notify.key_of(r.parent), r.name)
        return self.notify.opened(OpenFile(r.path, flags, node, handle), r.parent, r.name)

    @staticmethod
    def _check_open_existing(node: Node, flags: int, creating: bool) -> None:
        if creating and flags & O_EXCL:
            raise GuestErrno(E.EEXIST)
        if node.is_symlink and not flags & O_PATH:
            raise GuestErrno(E.ELOOP)           # O_NOFOLLOW on a symlink
        if flags & O_DIRECTORY and not node.is_dir:
            raise GuestErrno(E.ENOTDIR)
        if node.is_dir and not flags & O_PATH and (creating or wants_write(flags)):
            raise GuestErrno(E.EISDIR)

    def _lister(self, r: Resolved, proc: ProcessView) -> Callable[[], list[DirEntry]]:
        """The listing of the directory `r` names, for its open file description: it keeps
        the directory and its parent's inode number, not the chain of directories above."""
        chain = r.full_chain()
        node = chain[-1][1]
        parent_ino = (chain[-2][1] if len(chain) > 1 else node).ino   # the root is its own
        at_root = len(chain) == 1
        return lambda: self._listing(node, parent_ino, at_root, proc)

    def _listing(self, node: Node, parent_ino: int, at_root: bool,
                 proc: ProcessView) -> list[DirEntry]:
        children = node.entries()                             # in the order the mount lists
        if at_root:                                           # the root: show the mounts
            merged = dict(children)
            merged.update((name, self._mounted(name, proc)) for name in MOUNT_POINTS)
            children = sorted(merged.items())
        listing = [DirEntry(node.ino, b".", DT_DIR), DirEntry(parent_ino, b"..", DT_DIR)]
        listing += [DirEntry(child.ino, name, dtype_of(child.fmt)) for name, child in children]
        return listing

    # --- queries -------------------------------------------------------------------------------
    def stat(self, path: bytes, cwd: bytes, proc: ProcessView, follow: bool = True) -> StatResult:
        r = self._resolve(path, cwd, proc, follow=follow, stop_at_fd_links=True)
        if r.fd_link:
            return self._fd_file(r, proc).stat()
        if r.node is None:
            raise GuestErrno(E.ENOENT)
        return r.node.stat()

    def access(self, path: bytes, cwd: bytes, proc: ProcessView, mode: int,
               effective: bool = False) -> None:
        """access(2) checks with the real ids unless `effective` (AT_EACCESS)."""
        if mode & ~0o7:
            raise GuestErrno(E.EINVAL)
        checker = access_of(proc) if effective else real_access(proc)
        node = self._resolve(path, cwd, proc, search_as=checker).node
        if node is None:
            raise GuestErrno(E.ENOENT)
        if mode:
            checker.check(node.stat(), mode)

    def readlink(self, path: bytes, cwd: bytes, proc: ProcessView) -> bytes:
        return self._existing(path, cwd, proc, follow=False).readlink()

    def realpath(self, path: bytes, cwd: bytes, proc: ProcessView) -> bytes:
        r = self._resolve(path, cwd, proc)
        if r.node is None:
            raise GuestErrno(E.ENOENT)
        return r.path

    def directory(self, path: bytes, cwd: bytes, proc: ProcessView) -> bytes:
        """The global path of the directory `path` names, for chdir and chroot (fs/open.c:
        user_path_at with LOOKUP_DIRECTORY, then MAY_EXEC, which root always has on a
        directory: CAP_DAC_READ_SEARCH)."""
        r = self._resolve(path, cwd, proc)
        if r.node is None:
            raise GuestErrno(E.ENOENT)
        if not r.node.is_dir:
            raise GuestErrno(E.ENOTDIR)
        access_of(proc).check(r.node.stat(), MAY_EXEC)
        return r.path

    def is_dir(self, path: bytes, cwd: bytes, proc: ProcessView) -> bool:
        try:
            return self._existing(path, cwd, proc).is_dir
        except GuestErrno:
            return False

    # --- changes to names ----------------------------------------------------------------------
    def mkdir(self, path: bytes, mode: int, cwd: bytes, proc: ProcessView) -> None:
        r = self._resolve(path, cwd, proc, follow=False, parent_op=True)
        if r.last != LAST_NORM or r.node is not None:
            raise GuestErrno(E.EEXIST)
        # vfs_mkdir keeps S_IRWXUGO|S_ISVTX
        self._made(r, proc, lambda: r.parent.mkdir(r.name, mode & 0o1777))
        self.notify.name_event(r.parent, IN_CREATE, r.name, True)

    def mknod(self, path: bytes, mode: int, cwd: bytes, proc: ProcessView) -> None:
        """mknodat(2) once may_mknod() has accepted the type (fs/namei.c: do_mknodat): `mode`
        carries the S_IFMT type (0 = regular) and the permission bits after the umask."""
        r = self._resolve(path, cwd, proc, follow=False, parent_op=True)
        self._check_new_name(r)
        kind = mode & S_IFMT
        if kind in (S_IFCHR, S_IFBLK):
            raise GuestErrno(E.EPERM)       # vfs_mknod(): devices need CAP_MKNOD in the host
        if kind in (S_IFIFO, S_IFSOCK):
            self._made(r, proc, lambda: r.parent.mknod(r.name, mode))
        else:
            self._made(r, proc, lambda: r.parent.create(r.name, mode & 0o7777))
        self.notify.name_event(r.parent, IN_CREATE, r.name, False)

    def rmdir(self, path: bytes, cwd: bytes, proc: ProcessView) -> None:
        r = self._resolve(path, cwd, proc, follow=False, parent_op=True)
        if r.last != LAST_NORM:
            raise GuestErrno({LAST_DOT: E.EINVAL, LAST_DOTDOT: E.ENOTEMPTY}.get(r.last, E.EBUSY))
        if r.node is None:
            raise GuestErrno(E.ENOENT)
        if not r.node.is_dir:
            raise GuestErrno(E.ENOTDIR)
        if self._is_mount_point(r):
            raise GuestErrno(E.EBUSY)
        _may_delete(access_of(proc), r)
        r.parent.rmdir(r.name)
        self.notify.removed(r.parent, r.name, r.node, is_dir=True)
    def unlink(self, path: bytes, cwd: bytes, proc: ProcessView) -> None:
        r = self._resolve(path, cwd, proc, follow=False, parent_op=True)
        if r.last != LAST_NORM:
            raise GuestErrno(E.EISDIR)
        if r.node is None:
            raise GuestErrno(E.ENOENT)
        if r.node.is_dir:
            raise GuestErrno(E.EISDIR)
        if r.trailing_slash:
            raise GuestErrno(E.ENOTDIR)
        _may_delete(access_of(proc), r)
        r.parent.unlink(r.name)
        self.notify.removed(r.parent, r.name, r.node, is_dir=False)

    def rename(self, old: bytes, new: bytes, cwd: bytes, proc: ProcessView) -> None:
        src = self._resolve(old, cwd, proc, follow=False, parent_op=True)
        dst = self._resolve(new, cwd, proc, follow=False, parent_op=True)
        _check_rename(src, dst)
        if dst.node is not None and src.node.same_inode(dst.node):
            return                      # vfs_rename: same inode, nothing to do
        if self._is_mount_point(src) or self._is_mount_point(dst):
            raise GuestErrno(E.EBUSY)
        if dst.node is not None and src.node.is_dir != dst.node.is_dir:
            raise GuestErrno(E.ENOTDIR if src.node.is_dir else E.EISDIR)
        access = access_of(proc)
        _may_delete(access, src)
        if dst.node is not None:
            _may_delete(access, dst)
        else:
            access.check(dst.parent.stat(), MAY_WRITE | MAY_EXEC)
        src.parent.rename(src.name, dst.parent, dst.name)
        self.notify.moved(src.parent, src.name, src.node, dst.parent, dst.name, dst.node)
    def symlink(self, target: bytes, linkpath: bytes, cwd: bytes, proc: ProcessView) -> None:
        if not target:
            raise GuestErrno(E.ENOENT)
        if len(target) >= PATH_MAX:
            raise GuestErrno(E.ENAMETOOLONG)
        r = self._resolve(linkpath, cwd, proc, follow=False, parent_op=True)
        self._check_new_name(r)
        self._made(r, proc, lambda: r.parent.symlink(r.name, bytes(target)))
        self.notify.name_event(r.parent, IN_CREATE, r.name, False)

    def link(self, old: bytes, new: bytes, cwd: bytes, proc: ProcessView,
             follow: bool = False) -> None:
        node = self._existing(old, cwd, proc, follow)
        r = self._resolve(new, cwd, proc, follow=False, parent_op=True)
        self._check_new_name(r)
        if r.parent.mount != node.mount:
            raise GuestErrno(E.EXDEV)
        if node.is_dir:
            raise GuestErrno(E.EPERM)
        access_of(proc).check(r.parent.stat(), MAY_WRITE | MAY_EXEC)
        r.parent.link(r.name, node)
        self.notify.inode_event(node, IN_ATTRIB)
        self.notify.name_event(r.parent, IN_CREATE, r.name, False)

    @staticmethod
    def _check_new_name(r: Resolved) -> None:
        """filename_create(): the name must be new and not end in a slash."""
        if r.last != LAST_NORM or r.node is not None:
            raise GuestErrno(E.EEXIST)
        if r.trailing_slash:
            raise GuestErrno(E.ENOENT)

    # --- changes to inodes ---------------------------------------------------------------------
    def chmod(self, path: bytes, mode: int, cwd: bytes, proc: ProcessView) -> None:
        node = self._existing(path, cwd, proc)
        node.chmod(access_of(proc).chmod_mode(node.stat(), mode & 0o7777))
        self.notify.inode_event(node, IN_ATTRIB)

    def chown(self, path: bytes, uid: int, gid: int, cwd: bytes, proc: ProcessView,
              follow: bool = True) -> None:
        """chown_common(): uid/gid as 32 bits, -1 unchanged (permission.py says who may)."""
        node = self._existing(path, cwd, proc, follow)
        chown_node(node, uid, gid, access_of(proc))
        self.notify.inode_event(node, IN_ATTRIB)

    def utimens(self, path: bytes, atime_ns: int | None, mtime_ns: int | None, cwd: bytes,
                proc: ProcessView, follow: bool = True, to_now: bool = False) -> None:
        """Set times; None leaves one unchanged (the caller resolves UTIME_NOW / UTIME_OMIT).
        `to_now`: both times are the current time, which a writer may set (EACCES for
        others); other times only the owner (EPERM), as vfs_utimes/setattr_prepare."""
        node = self._existing(path, cwd, proc, follow)
        access, st = access_of(proc), node.stat()
        if not access.owns(st):
            if not to_now:
                raise GuestErrno(E.EPERM)
            access.check(st, MAY_WRITE)
        node.utimens(atime_ns, mtime_ns)
        self.notify.inode_event(node, IN_ATTRIB)

    def truncate(self, path: bytes, length: int, cwd: bytes, proc: ProcessView) -> None:
        if length < 0:
            raise GuestErrno(E.EINVAL)
        node = self._existing(path, cwd, proc)
        if node.is_dir:
            raise GuestErrno(E.EISDIR)
        if not node.is_regular:
            raise GuestErrno(E.EINVAL)
        access_of(proc).check(node.stat(), MAY_WRITE)
        node.truncate(length)
        self.notify.inode_event(node, IN_MODIFY)

    def _made(self, r: Resolved, proc: ProcessView, make: Callable[[], object]) -> Node | None:
        """Make a new name in r.parent (the caller may write and search it, else EACCES)
        and give the new inode the caller's ownership (inode_init_owner); returns the node."""
        access = access_of(proc)
        parent = r.parent.stat()
        access.check(parent, MAY_WRITE | MAY_EXEC)
        made = make()
        node = made if isinstance(made, Node) else r.parent.lookup(r.name)
        uid, gid, inherit = access.new_owner(parent)
        if node is not None and ((uid, gid) != (0, 0) or inherit):
            node.chown(uid, gid)
            if inherit and node.is_dir:
                node.chmod(node.stat().mode & 0o7777 | S_ISGID)
        return node


def _searcher(access: Access):
    """The Walker's search check: None when the caller searches every directory (root)."""
    if access.searches_anything:
        return None
    return lambda directory: access.check(directory.stat(), MAY_EXEC)


def _may_delete(access: Access, r: Resolved) -> None:
    """may_delete(): write and search on the directory (EACCES), then its sticky bit (EPERM)."""
    parent = r.parent.stat()
    access.check(parent, MAY_WRITE | MAY_EXEC)
    access.check_sticky(parent, r.node.stat())


def open_mask(flags: int) -> int:
    """build_open_flags(): what opening asks of the inode (O_TRUNC asks to write)."""
    mask = {O_RDONLY: MAY_READ, O_WRONLY: MAY_WRITE}.get(flags & O_ACCMODE, MAY_READ | MAY_WRITE)
    return mask | MAY_WRITE if flags & O_TRUNC else mask


def chown_node(node: Node, uid: int, gid: int, access: Access) -> None:
    """chown_common() on an inode: who may (permission.py), then the new ids; a file that is
    not a directory loses S_ISUID, and S_ISGID with a group x bit (ATTR_KILL_SUID/SGID)."""
    st = node.stat()
    access.check_chown(st, uid, gid)
    node.chown(uid, gid)
    if not node.is_dir and not node.is_symlink:
        mode = st.mode & 0o7777 & ~S_ISUID
        if mode & 0o010:
            mode &= ~S_ISGID
        if mode != st.mode & 0o7777:
            node.chmod(mode)


def _check_rename(src: Resolved, dst: Resolved) -> None:
    """The path checks of do_renameat2(), in Linux's order."""
    if src.parent.mount != dst.parent.mount:
        raise GuestErrno(E.EXDEV)
    if src.last != LAST_NORM or dst.last != LAST_NORM:
        raise GuestErrno(E.EBUSY)
    if src.node is None:
        raise GuestErrno(E.ENOENT)
    if not src.node.is_dir and (src.trailing_slash or dst.trailing_slash):
        raise GuestErrno(E.ENOTDIR)
    old, new = src.components, dst.components
    if len(new) > len(old) and new[:len(old)] == old:
        raise GuestErrno(E.EINVAL)      # moving a directory into itself
    if len(old) > len(new) and old[:len(new)] == new:
        raise GuestErrno(E.ENOTEMPTY)   # the target is an ancestor of the source

