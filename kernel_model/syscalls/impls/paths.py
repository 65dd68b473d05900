"""Calls that name files by path: open, access, readlink, mkdir, unlink, rename, links, cwd...

`*at` variants resolve relative paths against a directory fd; AT_FDCWD (-100) means the cwd
(fs/namei.c). Paths are read from guest memory with EFAULT/ENAMETOOLONG checks.
"""
import os
from types import SimpleNamespace

from ... import errno as E
from ...errno import GuestErrno
from ...fs.fifo import open_fifo
from ...fs.name_checks import chown_node
from ...fs.permission import access_of
from ...fs.constants import S_IFBLK, S_IFCHR, S_IFIFO, S_IFLNK, S_IFMT, S_IFREG, S_IFSOCK
from ...fs.renamed import follow_rename
from ...landlock.fs_guard import guarded
from ...landlock.hooks import check_open as landlock_check_open
from ...fs.resolve import ResolveView
from ...fs.rootpath import getcwd_text
from ...creds import CAP_DAC_READ_SEARCH
from ...fsview import fs_view as process_view, global_view as process_global_view
from ..kinds import K, Ret
from ..registry import syscall
from .leases import break_leases
from ...process.clone_fs import set_fs

from ...flags import (AT_EACCESS, AT_EMPTY_PATH, AT_FDCWD, AT_REMOVEDIR, AT_SYMLINK_FOLLOW,
                      AT_SYMLINK_NOFOLLOW, O_CLOEXEC, O_CREAT, O_LARGEFILE, O_PATH, O_PATH_FLAGS,
                      O_TRUNC, O_WRONLY)
RENAME_NOREPLACE, RENAME_EXCHANGE = 1, 2


def fs_view(ctx):
    return process_view(ctx.proc)


def guarded_fs(ctx):
    """The file system as the calling thread's Landlock domain lets it reach it."""
    return guarded(ctx.kernel.fs, ctx.thread.task_flags.landlock)


def global_view(ctx):
    """For global paths (an open file's path, one realpath gave): resolved from the guest
    root even when the process has chroot'ed elsewhere."""
    return process_global_view(ctx.proc)


def base_dir(ctx, dirfd: int, path: bytes) -> bytes:
    """The directory a relative `path` starts from (the cwd, or the directory of `dirfd`)."""
    dirfd = ctx.int32(dirfd)
    if path.startswith(b"/") or dirfd == AT_FDCWD:
        return ctx.proc.cwd
    f = ctx.proc.fds.get(dirfd)
    node = getattr(f, "node", None)
    if getattr(node, "dead", False):
        raise GuestErrno(E.ENOENT)              # a removed directory: nothing can be found in it
    # the descriptor's own inode: no walk to it, which the caller may not be allowed to make
    # (path_init takes the file's path as it is; LTP fchownat03 as nobody)
    if not (node.is_dir if node is not None else
            ctx.kernel.fs.is_dir(f.path, b"/", global_view(ctx))):
        raise GuestErrno(E.ENOTDIR)
    return f.path


def _open(ctx, dirfd, pathname, flags, mode, resolve=0):
    """`resolve`: openat2's RESOLVE_* flags (fs/resolve.py), checked by the caller."""
    path = ctx.read_path(pathname)
    if flags & O_PATH:
        flags &= O_PATH_FLAGS       # build_open_how(): "O_PATH beats everything else"
    elif ctx.abi == "x86_64":
        flags |= O_LARGEFILE        # implied on 64-bit (fcntl F_GETFL shows it)
    view = fs_view(ctx)
    if resolve:
        # a scoped walk starts at dirfd even for an absolute path (fs/namei.c path_init)
        view = ResolveView(view, resolve, base_dir(ctx, dirfd, b"."))
    base = base_dir(ctx, dirfd, path)
    break_leases(ctx, path, base, view, flags)
    # the umask applies unless the directory has a default ACL (fs/acl_inherit.py)
    f = guarded_fs(ctx).open(path, flags & ~O_CLOEXEC, mode & 0o7777, base, view)
    node = getattr(f, "node", None)          # /proc/self/fd/N may reopen a pipe or stdio
    if node is not None:                     # security_file_open (Landlock's hook_file_open)
        try:
            landlock_check_open(ctx.thread, f, flags, node.is_dir)
        except GuestErrno:
            f.close()
            raise
    if node is not None and node.is_fifo and not flags & O_PATH:
        f = open_fifo(ctx.kernel, ctx.thread, node, f.path, flags & ~O_CLOEXEC)
    elif hasattr(node, "open_tty") and not flags & O_PATH:     # /dev/ptmx, /dev/pts/N
        f = node.open_tty(ctx, f.path, flags & ~O_CLOEXEC)
    return ctx.proc.fds.install(f, cloexec=bool(flags & O_CLOEXEC))


@syscall("open", args=(("pathname", K.PATH), ("flags", K.OPEN_FLAGS), ("mode", K.MODE_IF_CREAT)))
def sys_open(ctx, pathname, flags, mode):
    return _open(ctx, AT_FDCWD, pathname, flags, mode)


@syscall("openat", args=(("dirfd", K.DIRFD), ("pathname", K.PATH), ("flags", K.OPEN_FLAGS),
                         ("mode", K.MODE_IF_CREAT)))
def sys_openat(ctx, dirfd, pathname, flags, mode):
    return _open(ctx, dirfd, pathname, flags, mode)


@syscall("creat")
def sys_creat(ctx, pathname, mode):
    return _open(ctx, AT_FDCWD, pathname, O_CREAT | O_WRONLY | O_TRUNC, mode)


def _access(ctx, dirfd, pathname, mode, flags=0):
    """do_faccessat(): the mode, then the flags (AT_EACCESS, AT_SYMLINK_NOFOLLOW and
    AT_EMPTY_PATH only: EINVAL), then the lookup."""
    if mode & ~7:
        raise GuestErrno(E.EINVAL)
    if flags & ~(AT_EACCESS | AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH):
        raise GuestErrno(E.EINVAL)
    effective = bool(flags & AT_EACCESS)
    if flags & AT_EMPTY_PATH and pathname and ctx.read_cstr(pathname, 4095) == b"":
        node = _fd_inode(ctx, dirfd)
        if node is None:                        # a pipe's or socket's inode: its own mode
            node = SimpleNamespace(stat=ctx.proc.fds.get(ctx.int32(dirfd)).stat)
        ctx.kernel.fs.access(b"", b"/", fs_view(ctx), mode, effective=effective, node=node)
        return 0
    path = ctx.read_path(pathname)
    ctx.kernel.fs.access(path, base_dir(ctx, dirfd, path), fs_view(ctx), mode,
                         effective=effective, follow=not flags & AT_SYMLINK_NOFOLLOW)
    return 0


def _fd_inode(ctx, dirfd):
    """The inode an empty path with AT_EMPTY_PATH names: the cwd's for AT_FDCWD, else the
    fd's file's (EBADF for no such fd; None for a pipe or socket, whose inode is no node of
    the file system)."""
    if ctx.int32(dirfd) == AT_FDCWD:
        return ctx.kernel.fs.inode(ctx.proc.cwd, b"/", global_view(ctx))
    return getattr(ctx.proc.fds.get(ctx.int32(dirfd)), "node", None)


@syscall("access", args=(("pathname", K.PATH), ("mode", K.ACCESS_MODE)))
def sys_access(ctx, pathname, mode):
    return _access(ctx, AT_FDCWD, pathname, mode)


@syscall("faccessat", args=(("dirfd", K.DIRFD), ("pathname", K.PATH), ("mode", K.ACCESS_MODE)))
def sys_faccessat(ctx, dirfd, pathname, mode):
    return _access(ctx, dirfd, pathname, mode)


@syscall("faccessat2", args=(("dirfd", K.DIRFD), ("pathname", K.PATH), ("mode", K.ACCESS_MODE),
                             ("flags", K.ACCESS_AT_FLAGS)))
def sys_faccessat2(ctx, dirfd, pathname, mode, flags):
    return _access(ctx, dirfd, pathname, mode, flags)


def _readlink(ctx, dirfd, pathname, buf, size):
    size = ctx.int32(size)
    if size <= 0:
        raise GuestErrno(E.EINVAL)
    if pathname and ctx.read_cstr(pathname, 4095) == b"":
        target = _readlink_empty(ctx, dirfd)[:size]
    else:
        path = ctx.read_path(pathname)
        target = ctx.kernel.fs.readlink(path, base_dir(ctx, dirfd, path), fs_view(ctx))[:size]
    ctx.write(buf, target)
    return len(target)


def _readlink_empty(ctx, dirfd) -> bytes:
    """An empty path names dirfd's own file (do_readlinkat's LOOKUP_EMPTY: an O_PATH |
    O_NOFOLLOW descriptor of a symlink reads that link); anything but a symlink is ENOENT."""
    dirfd = ctx.int32(dirfd)
    if dirfd == AT_FDCWD:
        raise GuestErrno(E.ENOENT)
    node = getattr(ctx.proc.fds.get(dirfd), "node", None)
    if node is None or node.stat().mode & S_IFMT != S_IFLNK:
        raise GuestErrno(E.ENOENT)
    return node.readlink()


@syscall("readlink", args=(("pathname", K.PATH), ("buf", K.BUF_OUT), ("bufsiz", K.ULONG)))
def sys_readlink(ctx, pathname, buf, size):
    return _readlink(ctx, AT_FDCWD, pathname, buf, size)


@syscall("readlinkat", args=(("dirfd", K.DIRFD), ("pathname", K.PATH), ("buf", K.BUF_OUT),
                             ("bufsiz", K.ULONG)))
def sys_readlinkat(ctx, dirfd, pathname, buf, size):
    return _readlink(ctx, dirfd, pathname, buf, size)


@syscall("getcwd", args=(("buf", K.STR_OUT), ("size", K.ULONG)))
def sys_getcwd(ctx, buf, size):
    # fs/d_path.c: a removed cwd (d_unlinked) is ENOENT, whatever the buffer.
    if not ctx.kernel.fs.is_dir(ctx.proc.cwd, b"/", global_view(ctx)):
        raise GuestErrno(E.ENOENT)
    cwd = getcwd_text(ctx.proc.cwd, ctx.proc.root) + b"\0"
    if size < len(cwd):
        raise GuestErrno(E.ERANGE)
    ctx.write(buf, cwd)
    return len(cwd)


@syscall("chdir", args=(("pathname", K.PATH),))
def sys_chdir(ctx, pathname):
    path = ctx.read_path(pathname)
    set_fs(ctx.kernel, ctx.proc, cwd=ctx.kernel.fs.directory(path, ctx.proc.cwd, fs_view(ctx)))
    return 0


@syscall("fchdir", args=(("fd", K.FD),))
def sys_fchdir(ctx, fd):
    f = ctx.proc.fds.get(ctx.int32(fd))
    set_fs(ctx.kernel, ctx.proc, cwd=ctx.kernel.fs.directory(f.path, b"/", global_view(ctx)))
    return 0


@syscall("chroot", args=(("pathname", K.PATH),))
def sys_chroot(ctx, pathname):
    """fs/open.c: the directory is looked up from the cwd under the current root (ENOENT,
    ENOTDIR, EACCES as for chdir), then CAP_SYS_CHROOT is needed (the guest is root: it has
    it). Only the root changes, not the cwd. The new root is a directory of the guest root,
    so no chroot ever widens what the sandbox shows."""
    path = ctx.read_path(pathname)
    set_fs(ctx.kernel, ctx.proc, root=ctx.kernel.fs.directory(path, ctx.proc.cwd, fs_view(ctx)))
    return 0


@syscall("umask", args=(("mask", K.OCTAL),), returns=Ret.OCTAL)
def sys_umask(ctx, mask):
    old = ctx.proc.umask
    set_fs(ctx.kernel, ctx.proc, umask=mask & 0o777)
    return old


def _path_at(ctx, dirfd, pathname):
    path = ctx.read_path(pathname)
    return path, base_dir(ctx, dirfd, path)


@syscall("mkdir", args=(("pathname", K.PATH), ("mode", K.MODE)))
def sys_mkdir(ctx, pathname, mode):
    return sys_mkdirat(ctx, AT_FDCWD & ctx.mask, pathname, mode)


@syscall("mkdirat", args=(("dirfd", K.DIRFD), ("pathname", K.PATH), ("mode", K.MODE)))
def sys_mkdirat(ctx, dirfd, pathname, mode):
    path, base = _path_at(ctx, dirfd, pathname)
    guarded_fs(ctx).mkdir(path, mode & 0o7777, base, fs_view(ctx))     # umask: fs/acl_inherit.py
    return 0


MKNOD_TYPES = (0, S_IFREG, S_IFCHR, S_IFBLK, S_IFIFO, S_IFSOCK)


@syscall("mknod", args=(("pathname", K.PATH), ("mode", K.MODE), ("dev", K.HEX)))
def sys_mknod(ctx, pathname, mode, dev):
    return sys_mknodat(ctx, AT_FDCWD & ctx.mask, pathname, mode, dev)


@syscall("mknodat", args=(("dirfd", K.DIRFD), ("pathname", K.PATH), ("mode", K.MODE),
                          ("dev", K.HEX)))
def sys_mknodat(ctx, dirfd, pathname, mode, dev):
    # fs/namei.c do_mknodat(): may_mknod() refuses a directory or an unknown type (EINVAL)
    # before the path is looked up; the umask or a default ACL (fs/acl_inherit.py) applies to
    # the permission bits; type 0 is a regular file; `dev` is in stat's new_encode_dev form.
    mode &= 0xFFFFFFFF
    if mode & S_IFMT not in MKNOD_TYPES:
        raise GuestErrno(E.EINVAL)
    path, base = _path_at(ctx, dirfd, pathname)
    perms = mode & 0o7777
    guarded_fs(ctx).mknod(path, (mode & S_IFMT) | perms, base, fs_view(ctx), dev & 0xFFFFFFFF)
    return 0


@syscall("rmdir", args=(("pathname", K.PATH),))
def sys_rmdir(ctx, pathname):
    path, base = _path_at(ctx, AT_FDCWD & ctx.mask, pathname)
    guarded_fs(ctx).rmdir(path, base, fs_view(ctx))
    return 0


@syscall("unlink", args=(("pathname", K.PATH),))
def sys_unlink(ctx, pathname):
    return sys_unlinkat(ctx, AT_FDCWD & ctx.mask, pathname, 0)


@syscall("unlinkat", args=(("dirfd", K.DIRFD), ("pathname", K.PATH), ("flags", K.AT_FLAGS)))
def sys_unlinkat(ctx, dirfd, pathname, flags):
    if flags & ~AT_REMOVEDIR:
        raise GuestErrno(E.EINVAL)
    path, base = _path_at(ctx, dirfd, pathname)
    if flags & AT_REMOVEDIR:
        guarded_fs(ctx).rmdir(path, base, fs_view(ctx))
    else:
        guarded_fs(ctx).unlink(path, base, fs_view(ctx))
    return 0


def _rename(ctx, olddirfd, oldpath, newdirfd, newpath, flags=0):
    old, old_base = _path_at(ctx, olddirfd, oldpath)
    new, new_base = _path_at(ctx, newdirfd, newpath)
    fs, view = guarded_fs(ctx), fs_view(ctx)
    if flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE) or \
            flags & RENAME_NOREPLACE and flags & RENAME_EXCHANGE:
        raise GuestErrno(E.EINVAL)
    if flags & RENAME_NOREPLACE:
        try:
            fs.stat(new, new_base, view, follow=False)
            raise GuestErrno(E.EEXIST)
        except GuestErrno as e:
            if e.errno != E.ENOENT:
                raise
    old_abs = fs.realpath(os.path.dirname(old) or b".", old_base, view) + b"/" + os.path.basename(old)
    new_abs = fs.realpath(os.path.dirname(new) or b".", new_base, view) + b"/" + os.path.basename(new)
    old_abs, new_abs = _canonical(old_abs), _canonical(new_abs)
    processes = ctx.kernel.processes.values()
    if flags & RENAME_EXCHANGE:
        fs.exchange(old_abs, new_abs, b"/", global_view(ctx))
        for before, after in ((old_abs, b"\0"), (new_abs, old_abs), (b"\0", new_abs)):
            follow_rename(processes, before, after)       # (no path is b"\0": a free name)
        return 0
    fs.rename(old_abs, new_abs, b"/", global_view(ctx))
    follow_rename(processes, old_abs, new_abs)
    return 0


def _canonical(path: bytes) -> bytes:
    """realpath(dirname) + "/" + basename without the doubled or trailing slashes."""
    return b"/" + b"/".join(part for part in path.split(b"/") if part)


@syscall("rename", args=(("oldpath", K.PATH), ("newpath", K.PATH)))
def sys_rename(ctx, oldpath, newpath):
    return _rename(ctx, AT_FDCWD & ctx.mask, oldpath, AT_FDCWD & ctx.mask, newpath)


@syscall("renameat", args=(("olddirfd", K.DIRFD), ("oldpath", K.PATH), ("newdirfd", K.DIRFD),
                           ("newpath", K.PATH)))
def sys_renameat(ctx, olddirfd, oldpath, newdirfd, newpath):
    return _rename(ctx, olddirfd, oldpath, newdirfd, newpath)


@syscall("renameat2", args=(("olddirfd", K.DIRFD), ("oldpath", K.PATH), ("newdirfd", K.DIRFD),
                            ("newpath", K.PATH), ("flags", K.HEX)))
def sys_renameat2(ctx, olddirfd, oldpath, newdirfd, newpath, flags):
    return _rename(ctx, olddirfd, oldpath, newdirfd, newpath, flags)


@syscall("symlink", args=(("target", K.PATH), ("linkpath", K.PATH)))
def sys_symlink(ctx, target, linkpath):
    return sys_symlinkat(ctx, target, AT_FDCWD & ctx.mask, linkpath)


@syscall("symlinkat", args=(("target", K.PATH), ("newdirfd", K.DIRFD), ("linkpath", K.PATH)))
def sys_symlinkat(ctx, target, newdirfd, linkpath):
    target = ctx.read_path(target)
    path, base = _path_at(ctx, newdirfd, linkpath)
    guarded_fs(ctx).symlink(target, path, base, fs_view(ctx))
    return 0


@syscall("link", args=(("oldpath", K.PATH), ("newpath", K.PATH)))
def sys_link(ctx, oldpath, newpath):
    return sys_linkat(ctx, AT_FDCWD & ctx.mask, oldpath, AT_FDCWD & ctx.mask, newpath, 0)


@syscall("linkat", args=(("olddirfd", K.DIRFD), ("oldpath", K.PATH), ("newdirfd", K.DIRFD),
                         ("newpath", K.PATH), ("flags", K.AT_FLAGS)))
def sys_linkat(ctx, olddirfd, oldpath, newdirfd, newpath, flags):
    if flags & ~(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH):
        raise GuestErrno(E.EINVAL)                  # do_linkat
    node = _link_source(ctx, olddirfd, oldpath, flags)
    new, new_base = _path_at(ctx, newdirfd, newpath)
    guarded_fs(ctx).link_inode(node, new, new_base, fs_view(ctx))
    return 0


def _link_source(ctx, olddirfd, oldpath, flags):
    """The inode linkat(2) names again: the file of `olddirfd` for an empty path with
    AT_EMPTY_PATH (only with CAP_DAC_READ_SEARCH, else ENOENT: do_linkat), or what `oldpath`
    names, its last symlink followed with AT_SYMLINK_FOLLOW (a /proc/PID/fd/N link to a file
    with no name reaches that file: how an O_TMPFILE file gets its name)."""
    if flags & AT_EMPTY_PATH and oldpath and ctx.read_cstr(oldpath, 4095) == b"":
        if not ctx.proc.creds.capable(CAP_DAC_READ_SEARCH):
            raise GuestErrno(E.ENOENT)
        node = _fd_inode(ctx, olddirfd)
        if node is None:
            raise GuestErrno(E.EXDEV)           # a pipe's or socket's inode: another mount
        return node
    old, old_base = _path_at(ctx, olddirfd, oldpath)
    return ctx.kernel.fs.inode(old, old_base, fs_view(ctx), follow=bool(flags & AT_SYMLINK_FOLLOW))


def _owner_ids(ctx, name: str, owner: int, group: int) -> tuple[int, int]:
    """i386's chown, lchown and fchown take 16-bit ids (kernel/uid16.c: 0xFFFF is -1)."""
    if ctx.abi == "i386" and not name.endswith("32") and name != "fchownat":
        return tuple(0xFFFFFFFF if v & 0xFFFF == 0xFFFF else v & 0xFFFF for v in (owner, group))
    return owner & 0xFFFFFFFF, group & 0xFFFFFFFF


def _chown_path(ctx, name, dirfd, pathname, owner, group, follow):
    path, base = _path_at(ctx, dirfd, pathname)
    uid, gid = _owner_ids(ctx, name, owner, group)
    ctx.kernel.fs.chown(path, uid, gid, base, fs_view(ctx), follow=follow)
    return 0


def _chown_call(name: str, follow: bool, args=None):
    @syscall(name, args=args)
    def chown(ctx, pathname, owner, group):
        return _chown_path(ctx, name, AT_FDCWD & ctx.mask, pathname, owner, group, follow)
    return chown


CHOWN_ARGS = (("pathname", K.PATH), ("owner", K.INT), ("group", K.INT))
for _name, _follow in (("chown", True), ("lchown", False), ("chown32", True),
                       ("lchown32", False)):
    _chown_call(_name, _follow, CHOWN_ARGS if not _name.endswith("32") else None)


def _fchown(ctx, name, fd, owner, group):
    f = ctx.proc.fds.get(ctx.int32(fd))
    node = getattr(f, "node", None)
    if node is not None:            # a pipe's or socket's inode keeps no owner here
        if f.flags & O_PATH:
            raise GuestErrno(E.EBADF)
        ctx.kernel.fs.check_writable(f, fs_view(ctx))      # mnt_want_write_file: EROFS
        chown_node(node, *_owner_ids(ctx, name, owner, group), access_of(fs_view(ctx)))
    return 0


@syscall("fchown", args=(("fd", K.FD), ("owner", K.INT), ("group", K.INT)))
def sys_fchown(ctx, fd, owner, group):
    return _fchown(ctx, "fchown", fd, owner, group)


@syscall("fchown32")
def sys_fchown32(ctx, fd, owner, group):
    return _fchown(ctx, "fchown32", fd, owner, group)


@syscall("fchownat", args=(("dirfd", K.DIRFD), ("pathname", K.PATH), ("owner", K.INT),
                           ("group", K.INT), ("flags", K.AT_FLAGS)))
def sys_fchownat(ctx, dirfd, pathname, owner, group, flags):
    if flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH):
        raise GuestErrno(E.EINVAL)
    if flags & AT_EMPTY_PATH and pathname and ctx.read_cstr(pathname, 4095) == b"":
        return _fchown(ctx, "fchownat", dirfd, owner, group)
    return _chown_path(ctx, "fchownat", dirfd, pathname, owner, group,
                       not flags & AT_SYMLINK_NOFOLLOW)
