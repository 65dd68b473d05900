"""Calls that administer the machine's namespaces and swap: swapon, swapoff, setns, unshare
(mm/swapfile.c, kernel/nsproxy.c, kernel/fork.c); mount, umount, pivot_root and mount_setattr
are mount.py, umount.py, pivot_root.py and mount_setattr.py; reboot is reboot.py.

The guest's root holds CAP_SYS_ADMIN (creds.py's model), but the sandbox has no swap for it to
administer: swapon and swapoff answer EPERM, as a security module's hook refuses. unshare: a
private fd table (CLONE_FILES: EMFILE when its copy would exceed fs.nr_open), a private
fs_struct (CLONE_FS: cwd, root and umask no longer follow the processes it was shared with),
nothing for what is already private in the model (CLONE_SYSVSEM, and CLONE_VM/SIGHAND/THREAD
of a single-threaded process); a new time namespace for the caller's children (CLONE_NEWTIME,
kernel_model/time_namespace.py); a new user namespace for the caller, a new pid namespace for
its children and a new network namespace (CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET:
process/fork_ns.py); a new mount (with CLONE_FS, as ksys_unshare adds it), UTS or IPC
namespace for the caller (process/namespaces.py); a new cgroup namespace is EPERM. setns
takes a namespace file of /proc/PID/ns (fs/nsfs.py) and joins that namespace; joining a mount
namespace puts the caller's root and cwd at its root (mntns_install).
"""
from ... import errno as E
from ...creds import CAP_SYS_ADMIN
from ...errno import GuestErrno
from ...fs.nsfs import NamespaceFile
from ...process.clone_fs import FsStruct, set_fs
from ...process.fork_ns import setns as setns_pid_user, unshare as unshare_pid_user
from ...process.namespaces import OWN_NAMESPACES, enter_namespace, unshare_namespaces
from ...time_namespace import enter as enter_time_ns
from ...vdso.vvar import serve_vdso
from ..kinds import K
from ..registry import syscall

CLONE_VM, CLONE_FS, CLONE_FILES, CLONE_SIGHAND = 0x100, 0x200, 0x400, 0x800
CLONE_THREAD, CLONE_SYSVSEM = 0x10000, 0x40000
CLONE_NEWTIME, CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS = 0x80, 0x20000, 0x02000000, 0x04000000
CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x08000000, 0x10000000, 0x20000000, 0x40000000
NAMESPACES = (CLONE_NEWTIME | CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC
              | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET)
UNSHARE_FLAGS = (CLONE_THREAD | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_VM
                 | CLONE_SYSVSEM | NAMESPACES)


@syscall("swapon", "swapoff")
def sys_refused(ctx):
    """capable(CAP_SYS_ADMIN) comes first; the sandbox has no swap to administer."""
    raise GuestErrno(E.EPERM)


@syscall("setns", args=(("fd", K.FD), ("nstype", K.HEX)))
def sys_setns(ctx, fd, nstype):
    """kernel/nsproxy.c setns() with a namespace file (fs/nsfs.py): the type given must be 0 or
    the file's (EINVAL), then the kind's install: joining one's own user namespace is EINVAL
    (userns_install), the others need CAP_SYS_ADMIN (EPERM; mntns_install also refuses a
    task sharing its fs_struct, EINVAL; timens_install a task with other threads, EUSERS);
    a time namespace becomes the caller's and its children's, a mount, UTS or IPC namespace
    the caller's (process/namespaces.py; a mount namespace with root and cwd at its root);
    the one namespace of each other kind is the caller's own, so joining it changes nothing.
    Any other file, a pidfd too, is EINVAL."""
    f = ctx.proc.fds.get(ctx.int32(fd))             # EBADF first
    nstype &= 0xFFFFFFFF
    if not isinstance(f, NamespaceFile) or nstype not in (0, f.ns_type):
        raise GuestErrno(E.EINVAL)
    if f.ns_type in (CLONE_NEWUSER, CLONE_NEWPID) and f.ns is not None or f.ns_type == CLONE_NEWNET:
        setns_pid_user(ctx.kernel, ctx.proc, f.kind, f.ns)     # process/fork_ns.py
        return 0
    if f.ns_type == CLONE_NEWTIME and len(ctx.proc.live_threads()) > 1:
        raise GuestErrno(E.EUSERS)                  # timens_install: single-threaded only
    if not ctx.proc.creds.capable(CAP_SYS_ADMIN):
        raise GuestErrno(E.EPERM)
    if f.ns_type == CLONE_NEWNS and len(ctx.proc.live_threads()) > 1:
        raise GuestErrno(E.EINVAL)
    if f.ns_type == CLONE_NEWTIME:
        enter_time_ns(ctx.proc, f.ns)               # the caller and its children to come
        serve_vdso(ctx.proc)                        # and the vDSO's clocks with it
    if f.ns_type & OWN_NAMESPACES:
        enter_namespace(ctx.proc, f.ns_type, f.ns)
    if f.ns_type == CLONE_NEWNS:                    # mntns_install: at the namespace's root
        set_fs(ctx.kernel, ctx.proc, root=b"/", cwd=b"/")
    return 0


@syscall("unshare", args=(("flags", K.HEX),))
def sys_unshare(ctx, flags):
    flags &= 0xFFFFFFFF
    if flags & ~UNSHARE_FLAGS:
        raise GuestErrno(E.EINVAL)
    # check_unshare_flags(): sharing threads, handlers or memory cannot be undone while other
    # threads share them
    # (a new user namespace implies CLONE_THREAD)
    if flags & (CLONE_THREAD | CLONE_SIGHAND | CLONE_VM | CLONE_NEWUSER) and len(ctx.proc.live_threads()) > 1:
        raise GuestErrno(E.EINVAL)
    if flags & CLONE_NEWNS:
        flags |= CLONE_FS                           # ksys_unshare: a new mount ns, a new fs
    if flags & NAMESPACES & ~(CLONE_NEWTIME | OWN_NAMESPACES | CLONE_NEWPID | CLONE_NEWUSER
                              | CLONE_NEWNET):
        raise GuestErrno(E.EPERM)
    if flags & (CLONE_NEWPID | CLONE_NEWUSER | CLONE_NEWNET):
        unshare_pid_user(ctx.kernel, ctx.proc, flags)     # process/fork_ns.py
    if flags & (CLONE_NEWTIME | OWN_NAMESPACES):
        # unshare_nsproxy_namespaces: CAP_SYS_ADMIN over the (maybe new) user namespace
        if not ctx.proc.creds.capable_here(CAP_SYS_ADMIN):
            raise GuestErrno(E.EPERM)
    if flags & CLONE_NEWTIME:
        ctx.proc.time_ns_for_children = ctx.kernel.time_namespaces.new()
    if flags & OWN_NAMESPACES:
        unshare_namespaces(ctx.kernel, ctx.proc, flags)
    if flags & CLONE_FILES and any(p.fds is ctx.proc.fds and p is not ctx.proc
                                   for p in ctx.kernel.processes.values()):
        _check_room_for_copy(ctx.proc.fds, ctx.kernel.fs.tunables.nr_open)
        ctx.proc.fds = ctx.proc.fds.copy()
    if flags & CLONE_FS:
        ctx.proc.fs_struct = FsStruct()             # unshare_fs: copy_fs_struct
    return 0


BITS_PER_LONG, FILES_PER_KIB = 64, 1024 // 8
NR_OPEN_DEFAULT = BITS_PER_LONG


def _check_room_for_copy(fds, nr_open: int) -> None:
    """fs/file.c dup_fd: the copy needs a table as large as the open fds reach
    (count_open_files: whole words of the bitmap); one larger than fs.nr_open cannot be
    allocated (alloc_fdtable caps it), and the copy is EMFILE (LTP unshare03)."""
    if not fds.entries:
        return
    open_files = (max(fds.entries) // BITS_PER_LONG + 1) * BITS_PER_LONG
    if open_files > NR_OPEN_DEFAULT and _fdtable_size(open_files - 1, nr_open) < open_files:
        raise GuestErrno(E.EMFILE)


def _fdtable_size(nr: int, nr_open: int) -> int:
    """alloc_fdtable(nr): a power of two of 1 KiB blocks of pointers, capped at nr_open
    rounded up to a whole word."""
    blocks = nr // FILES_PER_KIB + 1
    size = (1 << (blocks - 1).bit_length()) * FILES_PER_KIB
    return min(size, ((nr_open - 1) | (BITS_PER_LONG - 1)) + 1)
