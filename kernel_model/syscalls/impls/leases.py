"""F_SETLEASE and F_GETLEASE (fs/locks.c fcntl_setlease, generic_setlease, fcntl_getlease) over
fs/leases.py, and the lease break of an open or a truncate (break_lease).

Leases are on regular files only (EINVAL), to their owner or CAP_LEASE (EACCES); an unknown
type is EINVAL. check_conflicting_open: a read lease is EAGAIN while the inode is open for
writing by any description (inode_is_open_for_write: the caller's own too), a write lease
while any other description has it open (i_writecount and i_readcount beyond the caller's).
The rootfs is an overlay, but the model grants leases as a local file system does (Linux's
overlayfs refuses write leases because it holds the real file open itself; LTP's fcntl24-26
accept both answers, fcntl33 wants a local file system's). Setting a lease makes the calling
process the description's owner (lease_setup's __f_setown, PIDTYPE_TGID), whom a break
signals. F_UNLCK with no lease is EAGAIN (generic_delete_lease); F_GETLEASE answers the type
the lease is going to (F_UNLCK without one).
"""
from ... import errno as E
from ...errno import GuestErrno
from ...flags import O_ACCMODE, O_NOFOLLOW, O_PATH, O_RDONLY
from ...fs.constants import S_IFMT, S_IFREG
from ...fs.fasync import F_OWNER_PID, fown_of
from ...fs.fsnotify import inode_key as node_key
from ...fs.locks import F_RDLCK, F_UNLCK, F_WRLCK, inode_key
from ...fs.name_checks import open_mask
from ...fs.permission import access_of
from .fown import sender

F_SETLEASE, F_GETLEASE = 1024, 1025
CAP_LEASE = 28


def lease_fcntl(ctx, f, fd: int, cmd: int, arg: int) -> int:
    if f.flags & O_PATH:
        raise GuestErrno(E.EBADF)
    leases = ctx.kernel.locks.leases
    if cmd == F_GETLEASE:
        return leases.kind_of(inode_key(f), f)
    kind = ctx.int32(arg)
    st = f.stat()
    if st.mode & S_IFMT != S_IFREG:
        raise GuestErrno(E.EINVAL)
    creds = ctx.proc.creds
    if creds.fsuid != st.uid and not creds.capable(CAP_LEASE):
        raise GuestErrno(E.EACCES)
    if kind not in (F_RDLCK, F_WRLCK, F_UNLCK):
        raise GuestErrno(E.EINVAL)
    key = inode_key(f)
    leases.set(key, f, kind, fd, sender(ctx.kernel),
               busy=kind != F_UNLCK and _conflicting_open(ctx.kernel, key, f, kind))
    if kind != F_UNLCK:
        fown = fown_of(f)
        fown.kind, fown.pid = F_OWNER_PID, ctx.proc.pid
    return 0


def _conflicting_open(kernel, key, mine, kind: int) -> bool:
    """check_conflicting_open() by the descriptions of the inode in every fd table
    (descriptions held nowhere else, as by an in-flight SCM_RIGHTS message, are not seen)."""
    for f in _descriptions(kernel, key):
        writing = f.flags & O_ACCMODE != O_RDONLY
        if kind == F_RDLCK and writing or kind == F_WRLCK and f is not mine:
            return True
    return False


def _descriptions(kernel, key) -> list:
    """The open descriptions of the regular file `key` (not O_PATH ones), each once."""
    found = {}
    for proc in kernel.processes.values():
        for entry in (proc.fds.entries.values() if proc.fds is not None else ()):
            f = entry.file
            node = getattr(f, "node", None)
            if (node is not None and node.is_regular and not f.flags & O_PATH
                    and id(f) not in found and inode_key(f) == key):
                found[id(f)] = f
    return list(found.values())


def break_leases(ctx, path: bytes, base: bytes, view, flags: int) -> None:
    """break_lease() before an open with `flags` (O_WRONLY for a truncate) of an existing file
    the caller may open: the breaker signals the holders and waits (fs/leases.py)."""
    leases = ctx.kernel.locks.leases
    if not leases or flags & O_PATH:
        return
    try:
        node = ctx.kernel.fs.inode(path, base, view, follow=not flags & O_NOFOLLOW)
        if not node.is_regular:
            return
        access_of(view).check(node.stat(), open_mask(flags))
    except GuestErrno:
        return                               # the call itself reports what is wrong
    leases.break_for(node_key(node), flags)
