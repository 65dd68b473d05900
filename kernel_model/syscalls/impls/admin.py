"""Calls that administer the machine, its mounts and namespaces: mount, umount/umount2,
pivot_root, swapon, swapoff, setns, unshare (fs/namespace.c, mm/swapfile.c, kernel/nsproxy.c,
kernel/fork.c); reboot is reboot.py.

The guest is root in its own user namespace, but the sandbox gives it no mount namespace,
pid namespace or swap of its own to administer: may_mount() and the CAP_SYS_ADMIN
checks fail and these calls answer EPERM, after the argument checks Linux makes first — as
they do in a container. unshare does what needs no new namespace: a private fd table
(CLONE_FILES), and nothing for what is already private in the model (CLONE_FS, CLONE_SYSVSEM,
and CLONE_VM/SIGHAND/THREAD of a single-threaded process); a new namespace is EPERM. setns
needs an fd of a namespace file or a pidfd, which no guest fd is (EINVAL).
"""
from ... import errno as E
from ...errno import GuestErrno
from ..kinds import K
from ..registry import syscall

MNT_FORCE, MNT_DETACH, MNT_EXPIRE, UMOUNT_NOFOLLOW = 1, 2, 4, 8
CLONE_VM, CLONE_FS, CLONE_FILES, CLONE_SIGHAND = 0x100, 0x200, 0x400, 0x800
CLONE_THREAD, CLONE_SYSVSEM = 0x10000, 0x40000
CLONE_NEWTIME, CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS = 0x80, 0x20000, 0x02000000, 0x04000000
CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x08000000, 0x10000000, 0x20000000, 0x40000000
NAMESPACES = (CLONE_NEWTIME | CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC
              | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET)
UNSHARE_FLAGS = (CLONE_THREAD | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_VM
                 | CLONE_SYSVSEM | NAMESPACES)


@syscall("mount", args=(("source", K.PATH), ("target", K.PATH), ("filesystemtype", K.PATH),
                        ("mountflags", K.HEX), ("data", K.PTR)))
@syscall("pivot_root", "swapon", "swapoff")
def sys_refused(ctx):
    """may_mount() / capable(CAP_SYS_ADMIN) come first."""
    raise GuestErrno(E.EPERM)


@syscall("umount2", args=(("target", K.PATH), ("flags", K.HEX)))
def sys_umount2(ctx, target, flags):
    if flags & 0xFFFFFFFF & ~(MNT_FORCE | MNT_DETACH | MNT_EXPIRE | UMOUNT_NOFOLLOW):
        raise GuestErrno(E.EINVAL)
    raise GuestErrno(E.EPERM)


@syscall("umount")
def sys_umount(ctx, target):
    raise GuestErrno(E.EPERM)                       # i386 oldumount: ksys_umount(name, 0)


@syscall("setns")
def sys_setns(ctx, fd, nstype):
    ctx.proc.fds.get(ctx.int32(fd))                 # EBADF first
    raise GuestErrno(E.EINVAL)                      # neither a namespace file nor a pidfd


@syscall("unshare", args=(("flags", K.HEX),))
def sys_unshare(ctx, flags):
    flags &= 0xFFFFFFFF
    if flags & ~UNSHARE_FLAGS:
        raise GuestErrno(E.EINVAL)
    # check_unshare_flags(): sharing threads, handlers or memory cannot be undone while other
    # threads share them
    if flags & (CLONE_THREAD | CLONE_SIGHAND | CLONE_VM) and len(ctx.proc.live_threads()) > 1:
        raise GuestErrno(E.EINVAL)
    if flags & NAMESPACES:
        raise GuestErrno(E.EPERM)
    if flags & CLONE_FILES and any(p.fds is ctx.proc.fds and p is not ctx.proc
                                   for p in ctx.kernel.processes.values()):
        ctx.proc.fds = ctx.proc.fds.copy()
    return 0
