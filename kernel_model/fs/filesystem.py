"""The file system the guest sees: a rootfs (overlay or write-through) plus /dev and /proc.

Every call takes the caller's cwd (a canonical guest path) and its ProcessView, because /proc
shows the calling process and relative paths start at its cwd. Errors are GuestErrno with the
errno Linux returns, in the order Linux checks (fs/namei.c, fs/open.c).

Permissions follow the caller's credentials (permission.py: the ProcessView's `creds` and
`groups`, root's without them): search on every directory walked, the access an open asks,
write and search on a directory whose names change, the sticky bit, ownership for chmod,
chown and times; a new inode is the caller's. Root passes them all but executing a file
without an x bit. A new inode's mode is the one asked under the umask or a default ACL.
"""
import os
from typing import Callable

from .. import errno as E
from ..errno import GuestErrno
from ..errors import KernelError
from .constants import (DT_DIR, O_CREAT, O_EXCL, O_NOATIME, O_NOFOLLOW, O_PATH, O_RDWR,
                        O_TMPFILE_BIT, O_TRUNC, PATH_MAX, S_IFBLK, S_IFCHR, S_IFIFO, S_IFMT,
                        S_IFREG, S_IFSOCK, S_ISGID, dtype_of)
from .databudget import DataBudget
from .fhandle import HandleTable
from .fsnotify import IN_ATTRIB, IN_CREATE, IN_MODIFY, Fsnotify
from .devfs import build_dev, char_driver
from .hostfs import HostContext, host_root_dir
from .inodes import InodeTable
from .namei import LAST_DOT, LAST_DOTDOT, LAST_NORM, ROOT_MOUNTS, Resolved, Walker
from .node import Node, wants_write
from .openfile import OpenFile
from .memfd import F_SEAL_SEAL, O_LARGEFILE, MemFile
from .inode_open import open_node, reopen
from .name_checks import (check_new_name, check_open_existing, check_rename, chown_node,
                          may_delete, open_mask, check_unchangeable)
from .overlay import overlay_root
from .rename_exchange import RenameExchange
from ..creds import CAP_MKNOD
from .permission import MAY_EXEC, MAY_WRITE, Access, access_of, real_access, searcher
from .shmfs import build_shm
from .tmpfile import check_linkable, check_tmpfile_flags, open_tmpfile
from .proc_mount import ProcMount
from .proctext import ProcessView, process_root
from .randomstream import DeterministicRandom
from .records import DirEntry, StatResult


class FileSystem(ProcMount, RenameExchange):
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
        # wait here (issue 31, start-up: its modules).
        self._sysctl: dict[bytes, tuple] = {}
        self._proc_files: dict[bytes, Callable[[], bytes]] = {}
        self._processes: Callable[[], dict] | None = None
        self._clocks = None               # the kernel's clocks /proc shows (account_time)
        self.notify = Fsnotify()          # inotify's watches hear the events (fsnotify.py)
        self.handles = HandleTable()      # name_to_handle_at's inodes (fhandle.py)

    def memfd(self, name: bytes, sealing: bool) -> OpenFile:
        """memfd_create: a new unnamed memory file of the shm mount, open read-write."""
        ctx = self._shm.ctx
        node = MemFile(ctx, ctx.meta(S_IFREG | 0o777), None)
        node.seals = 0 if sealing else F_SEAL_SEAL
        return OpenFile(b"/memfd:" + name + b" (deleted)", O_RDWR | O_LARGEFILE, node,
                        node.open_handle(O_RDWR))

    # --- resolution ----------------------------------------------------------------------------
    def _resolve(self, path: bytes, cwd: bytes, proc: ProcessView, *, follow: bool = True,
                 parent_op: bool = False, stop_at_fd_links: bool = False,
                 search_as: Access | None = None) -> Resolved:
        """`search_as`: whose search permission the walk needs (the caller's by default)."""
        walker = Walker(self._root, lambda name: self._mounted(name, proc), process_root(proc),
                        searcher(search_as or access_of(proc)), getattr(proc, "resolve", 0),
                        self.mount_points(proc))
        return walker.resolve(bytes(path), bytes(cwd), follow=follow, parent_op=parent_op,
                              stop_at_fd_links=stop_at_fd_links)

    @staticmethod
    def _fd_file(r: Resolved, proc: ProcessView):
        """The open file behind a /proc/PID/fd/N link to a pipe (or other pathless file)."""
        if r.node.opens is not None:        # /proc/PID/ns/*: a new namespace file (nsfs.py)
            return r.node.opens()
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

    def mount_points(self, proc: ProcessView) -> dict | None:
        """The caller's mount namespace's points (fs/mount_points.py makes the namespaces;
        None before any was made: the sandbox's own three mounts only)."""
        ns = getattr(proc, "mount_ns", None) or self.__dict__.get("initial_mount_ns")
        return ns.points if ns is not None else None

    def check_writable(self, r: Resolved, proc: ProcessView, other=None) -> None:
        """mnt_want_write, inode_permission's IS_RDONLY: a change under a read-only mount is
        EROFS. `r`: a Resolved or an open file (its path); `other`: rename's second name."""
        ns = getattr(proc, "mount_ns", None) or self.__dict__.get("initial_mount_ns")
        if ns is not None and ns.any_read_only() and any(
                ns.containing(x.path).read_only for x in (r, other or r)):
            raise GuestErrno(E.EROFS)

    def _existing(self, path: bytes, cwd: bytes, proc: ProcessView, follow: bool = True) -> Node:
        node = self._resolve(path, cwd, proc, follow=follow).node
        if node is None:
            raise GuestErrno(E.ENOENT)
        return node

    def _existing_resolved(self, path: bytes, cwd: bytes, proc: ProcessView,
                           follow: bool = True, writing: bool = False) -> Resolved:
        r = self._resolve(path, cwd, proc, follow=follow)
        if r.node is None:
            raise GuestErrno(E.ENOENT)
        if writing:     # mnt_want_write (EROFS), then notify_change's IS_IMMUTABLE/IS_APPEND
            self.check_writable(r, proc)            # ("touch": utimes to now, IS_IMMUTABLE)
            check_unchangeable(r.node.stat().iflags, touch=writing == "touch")
        return r

    def _changed(self, r: Resolved, mask: int) -> None:
        """fsnotify_change: the inode's watches hear it, and so do the directory's it was
        named in (fsnotify_parent, with the name); "." and ".." name no child here."""
        parent = self.notify.key_of(r.parent) if r.last == LAST_NORM else None
        self.notify.inode_event(r.node, mask, parent, r.name)

    def inode(self, path: bytes, cwd: bytes, proc: ProcessView, follow: bool = True) -> Node:
        """The inode `path` names, for calls on the inode itself (xattrs, inotify watches)."""
        r = self._resolve(path, cwd, proc, follow=follow, stop_at_fd_links=True)
        node = getattr(self._fd_file(r, proc), "node", None) if r.fd_link else r.node
        if node is None:        # no such name; or a pipe or socket behind /proc/PID/fd/N
            raise GuestErrno(E.EOPNOTSUPP if r.fd_link else E.ENOENT)
        return node

    # --- open ----------------------------------------------------------------------------------
    def open(self, path: bytes, flags: int, mode: int, cwd: bytes, proc: ProcessView) -> OpenFile:
        if flags & O_TMPFILE_BIT:
            return self._open_tmpfile(path, flags, mode, cwd, proc)
        creating = bool(flags & O_CREAT)
        # O_CREAT|O_EXCL never follows a final symlink: the name itself must not exist.
        follow = not flags & O_NOFOLLOW and not (creating and flags & O_EXCL)
        r = self._resolve(path, cwd, proc, follow=follow, stop_at_fd_links=True)
        if r.fd_link:
            return reopen(self._fd_file(r, proc), flags, proc)
        node = r.node
        if node is None:
            if not creating:
                raise GuestErrno(E.ENOENT)
            if r.trailing_slash:
                raise GuestErrno(E.EISDIR)
            node = self._made(r, proc, lambda m: r.parent.create(r.name, m & 0o7777), mode)
            self.notify.name_event(r.parent, IN_CREATE, r.name, False)
        else:
            check_open_existing(node, flags, creating)
            if node.is_regular and (wants_write(flags) or flags & O_TRUNC):
                self.check_writable(r, proc)        # inode_permission's IS_RDONLY: EROFS
            if not flags & O_PATH:
                access = access_of(proc)
                access.check(node.stat(), open_mask(flags))
                if flags & O_NOATIME and not access.owns(node.stat()):
                    raise GuestErrno(E.EPERM)     # may_open: O_NOATIME is the owner's
        if flags & O_PATH or node.is_fifo:
            # A fifo has no data in the file system: the caller opens its pipe
            # (kernel_model/fs/fifo.py, Linux's fifo_open in fs/pipe.c). The description shows
            # what it opened, whatever is renamed or planted around it later (Node.pin).
            return OpenFile(r.path, flags, node.pin(), None)
        if node.is_dir:
            listed = OpenFile(r.path, flags, node.pin(), None, self._lister(r, proc))
            return self.notify.opened(listed, r.parent, r.name)
        handle = (char_driver(self._dev, node) or node).open_handle(flags)
        if flags & O_TRUNC and wants_write(flags) and node.is_regular:
            handle.truncate(0)
            if r.node is not None:              # a file just created is not truncated
                self.notify.inode_event(node, IN_MODIFY, self.notify.key_of(r.parent), r.name)
        return self.notify.opened(OpenFile(r.path, flags, node, handle), r.parent, r.name)

    def _open_tmpfile(self, path: bytes, flags: int, mode: int, cwd: bytes,
                      proc: ProcessView) -> OpenFile:
        check_tmpfile_flags(flags)
        return open_tmpfile(self._resolve(path, cwd, proc), flags, mode, access_of(proc),
                            getattr(proc, "umask", 0))

    def open_inode(self, node: Node, path: bytes, flags: int, proc: ProcessView) -> OpenFile:
        """open_by_handle_at: open `node` itself, with open(2)'s checks (inode_open.py)."""
        return open_node(node, path, flags, proc,
                         lambda: self._listing(node, node.ino, False, proc))

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
        if at_root:        # the root: the mounts in their mount points' places, or after
            merged = dict(children)
            merged.update((name, self._mounted(name, proc)) for name in ROOT_MOUNTS)
            children = list(merged.items())
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
               effective: bool = False, follow: bool = True, node: Node | None = None) -> None:
        """access(2) checks with the real ids unless `effective` (AT_EACCESS); `follow` False
        checks a final symlink itself (AT_SYMLINK_NOFOLLOW); `node`: the inode to check
        instead of resolving `path` (an fd's, AT_EMPTY_PATH). W_OK on a read-only mount is
        EROFS but for a device, fifo or socket (sb_permission, do_faccessat)."""
        if mode & ~0o7:
            raise GuestErrno(E.EINVAL)
        checker = access_of(proc) if effective else real_access(proc)
        r = None if node is not None else self._resolve(path, cwd, proc, follow=follow,
                                                         search_as=checker)
        node = node if r is None else r.node
        if node is None:
            raise GuestErrno(E.ENOENT)
        if mode & MAY_WRITE and r is not None and (node.is_regular or node.is_dir):
            self.check_writable(r, proc)
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
        self._made(r, proc, lambda m: r.parent.mkdir(r.name, m & 0o1777), mode & 0o1777, True)
        self.notify.name_event(r.parent, IN_CREATE, r.name, True)

    def mknod(self, path: bytes, mode: int, cwd: bytes, proc: ProcessView, rdev: int = 0) -> None:
        """mknodat(2) once may_mknod() has accepted the type (fs/namei.c: do_mknodat): `mode`
        carries the S_IFMT type (0 = regular) and the permission bits; `rdev` a device's number.
        A device needs CAP_MKNOD (vfs_mknod: EPERM), which the sandbox's root has over the
        overlay; the write-through host folder takes none (the host's kernel decides there)."""
        r = self._resolve(path, cwd, proc, follow=False, parent_op=True)
        check_new_name(r)
        kind = mode & S_IFMT
        if kind in (S_IFCHR, S_IFBLK) and (self.writable or
                                           not access_of(proc).creds.capable(CAP_MKNOD)):
            raise GuestErrno(E.EPERM)
        number = (rdev,) if kind in (S_IFCHR, S_IFBLK) else ()     # a device's, not a fifo's
        special = kind in (S_IFIFO, S_IFSOCK) or number
        self._made(r, proc, (lambda m: r.parent.mknod(r.name, m, *number)) if special
                   else (lambda m: r.parent.create(r.name, m & 0o7777)), mode)
        self.notify.name_event(r.parent, IN_CREATE, r.name, False)

    def rmdir(self, path: bytes, cwd: bytes, proc: ProcessView) -> None:
        r = self._resolve(path, cwd, proc, follow=False, parent_op=True)
        if r.last != LAST_NORM:
            raise GuestErrno({LAST_DOT: E.EINVAL, LAST_DOTDOT: E.ENOTEMPTY}.get(r.last, E.EBUSY))
        if r.node is None:
            raise GuestErrno(E.ENOENT)
        if not r.node.is_dir:
            raise GuestErrno(E.ENOTDIR)
        if r.is_mount_point:
            raise GuestErrno(E.EBUSY)
        self.check_writable(r, proc)
        may_delete(access_of(proc), r)
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
        self.check_writable(r, proc)
        may_delete(access_of(proc), r)
        r.parent.unlink(r.name)
        self.notify.removed(r.parent, r.name, r.node, is_dir=False)

    def rename(self, old: bytes, new: bytes, cwd: bytes, proc: ProcessView) -> None:
        src = self._resolve(old, cwd, proc, follow=False, parent_op=True)
        dst = self._resolve(new, cwd, proc, follow=False, parent_op=True)
        check_rename(src, dst)
        if dst.node is not None and src.node.same_inode(dst.node):
            return                      # vfs_rename: same inode, nothing to do
        if src.is_mount_point or dst.is_mount_point:
            raise GuestErrno(E.EBUSY)
        if dst.node is not None and src.node.is_dir != dst.node.is_dir:
            raise GuestErrno(E.ENOTDIR if src.node.is_dir else E.EISDIR)
        self.check_writable(src, proc, dst)
        access = access_of(proc)
        may_delete(access, src)
        if dst.node is not None:
            may_delete(access, dst)
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
        check_new_name(r)
        self._made(r, proc, lambda _no_mode: r.parent.symlink(r.name, bytes(target)), None)
        self.notify.name_event(r.parent, IN_CREATE, r.name, False)

    def link(self, old: bytes, new: bytes, cwd: bytes, proc: ProcessView,
             follow: bool = False) -> None:
        self.link_inode(self._existing(old, cwd, proc, follow), new, cwd, proc)

    def link_inode(self, node: Node, new: bytes, cwd: bytes, proc: ProcessView) -> None:
        """A new name `new` for the inode `node` (do_linkat once the old side is found: a
        path, an fd with AT_EMPTY_PATH or a /proc/PID/fd/N link to a file with no name)."""
        r = self._resolve(new, cwd, proc, follow=False, parent_op=True)
        check_new_name(r)
        self.check_writable(r, proc)                # filename_create: EROFS first
        if r.parent.mount != node.mount:
            raise GuestErrno(E.EXDEV)
        if node.is_dir:
            raise GuestErrno(E.EPERM)
        access_of(proc).check(r.parent.stat(), MAY_WRITE | MAY_EXEC)
        check_linkable(node)
        r.parent.link(r.name, node)
        self.notify.inode_event(node, IN_ATTRIB)
        self.notify.name_event(r.parent, IN_CREATE, r.name, False)

    # --- changes to inodes ---------------------------------------------------------------------
    def chmod(self, path: bytes, mode: int, cwd: bytes, proc: ProcessView) -> None:
        r = self._existing_resolved(path, cwd, proc, writing=True)
        r.node.chmod(access_of(proc).chmod_mode(r.node.stat(), mode & 0o7777))
        self._changed(r, IN_ATTRIB)

    def chown(self, path: bytes, uid: int, gid: int, cwd: bytes, proc: ProcessView,
              follow: bool = True) -> None:
        """chown_common(): uid/gid as 32 bits, -1 unchanged (permission.py says who may)."""
        r = self._existing_resolved(path, cwd, proc, follow, True)
        chown_node(r.node, uid, gid, access_of(proc))
        self._changed(r, IN_ATTRIB)

    def utimens(self, path: bytes, atime_ns: int | None, mtime_ns: int | None, cwd: bytes,
                proc: ProcessView, follow: bool = True, to_now: bool = False) -> None:
        """Set times; None leaves one unchanged (the caller resolves UTIME_NOW / UTIME_OMIT).
        `to_now`: both times are the current time, which a writer may set (EACCES for
        others); other times only the owner (EPERM), as vfs_utimes/setattr_prepare."""
        r = self._existing_resolved(path, cwd, proc, follow, "touch" if to_now else True)
        access, st = access_of(proc), r.node.stat()
        if not access.owns(st):
            if not to_now:
                raise GuestErrno(E.EPERM)
            access.check(st, MAY_WRITE)
        r.node.utimens(atime_ns, mtime_ns)
        self._changed(r, IN_ATTRIB)

    def truncate(self, path: bytes, length: int, cwd: bytes, proc: ProcessView,
                 size_ok: Callable[[int], None] = lambda size: None) -> None:
        """`size_ok(current size)`: the caller's RLIMIT_FSIZE check (inode_newsize_ok), made
        once the file may be written, as do_truncate's notify_change makes it."""
        if length < 0:
            raise GuestErrno(E.EINVAL)
        r = self._existing_resolved(path, cwd, proc, writing=True)
        node = r.node
        if node.is_dir:
            raise GuestErrno(E.EISDIR)
        if not node.is_regular:
            raise GuestErrno(E.EINVAL)
        access_of(proc).check(node.stat(), MAY_WRITE)
        size_ok(node.stat().size)
        node.truncate(length)
        self._changed(r, IN_MODIFY)

    def _made(self, r: Resolved, proc: ProcessView, make: Callable[[int | None], object],
              mode: int | None, is_dir: bool = False) -> Node | None:
        """A new name in r.parent (that the caller may write and search, else EACCES) of `mode`
        under the umask or a default ACL (acl_inherit.py), owned as inode_init_owner says."""
        self.check_writable(r, proc)                # filename_create's mnt_want_write: EROFS
        access = access_of(proc)
        parent = r.parent.stat()
        access.check(parent, MAY_WRITE | MAY_EXEC)
        from . import acl_inherit          # when a file is first made, not at start-up
        mode, acls = acl_inherit.creation_mode(r.parent, mode, getattr(proc, "umask", 0), is_dir)
        made = make(mode)
        node = made if isinstance(made, Node) else r.parent.lookup(r.name)
        acl_inherit.give_acls(node, acls)
        uid, gid, inherit = access.new_owner(parent)
        if node is not None and ((uid, gid) != (0, 0) or inherit):
            node.chown(uid, gid)
            if inherit and node.is_dir:
                node.chmod(node.stat().mode & 0o7777 | S_ISGID)
        return node
