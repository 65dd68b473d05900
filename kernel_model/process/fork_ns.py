"""What clone does about pid, user and network namespaces (kernel/fork.c copy_process,
kernel/nsproxy.c copy_namespaces, kernel/pid.c alloc_pid): the child's credentials (a new
user namespace with CLONE_NEWUSER), its pid namespace (a new one with CLONE_NEWPID, else the
parent's namespace for children) and its numbers there, clone3's set_tid included, and its
network namespace (a new one with CLONE_NEWNET: net/namespace.py); unshare and setns of
the same kinds.
"""
from .. import errno as E
from ..errno import GuestErrno
from ..pid_namespace import new_namespace, plan_numbers
from ..user_namespace import INITIAL as INITIAL_USER_NS, create as create_user_ns

INITIAL_NET_INUM = 0xEFFFFFF9          # net/namespace.py's (not imported before a socket)

CLONE_PARENT, CLONE_THREAD = 0x8000, 0x10000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
CAP_SYS_ADMIN, CAP_CHECKPOINT_RESTORE = 21, 40


def check_thread(parent, flags: int) -> None:
    """copy_process: a thread shares its group's pid and user namespaces (EINVAL), and an
    init of a pid namespace has no siblings (CLONE_PARENT: EINVAL)."""
    if flags & CLONE_THREAD and (flags & (CLONE_NEWUSER | CLONE_NEWPID)
                                 or parent.pid_ns is not parent.pid_ns_for_children):
        raise GuestErrno(E.EINVAL)
    if flags & CLONE_PARENT and parent.pid_ns.reaper == parent.pid:
        raise GuestErrno(E.EINVAL)


def child_creds(kernel, parent, flags: int):
    """copy_creds: the parent's, or with CLONE_NEWUSER new ones in a new namespace."""
    if not flags & CLONE_NEWUSER:
        return parent.creds
    ns = create_user_ns(kernel, parent.creds, parent.root != b"/")
    return parent.creds.in_new_namespace(ns)


def child_pid_namespace(kernel, parent, creds, flags: int):
    """copy_namespaces: CLONE_NEWPID needs CAP_SYS_ADMIN in the child's user namespace (EPERM)
    and makes a namespace below the parent's namespace for children."""
    if not flags & CLONE_NEWPID:
        return parent.pid_ns_for_children
    if not creds.capable_here(CAP_SYS_ADMIN):
        raise GuestErrno(E.EPERM)
    return new_namespace(kernel, parent.pid_ns_for_children, creds.user_ns)


def child_net_namespace(kernel, parent, creds, flags: int):
    """copy_net_ns: CLONE_NEWNET needs CAP_SYS_ADMIN in the child's user namespace (EPERM)
    and makes a network owned by it; else the parent's (None: the initial one)."""
    if not flags & CLONE_NEWNET:
        return parent.net_ns
    if not creds.capable_here(CAP_SYS_ADMIN):
        raise GuestErrno(E.EPERM)
    from ..net.namespace import new as new_net_ns      # the network's tables, on first use
    return new_net_ns(kernel, creds.user_ns)


def numbers(kernel, ns, creds, set_tid: tuple) -> list:
    """alloc_pid's plan for a task born in `ns`: (namespace, number or None) per level, the
    deepest first; set_tid's numbers need CAP_CHECKPOINT_RESTORE (or CAP_SYS_ADMIN) over the
    namespace's owner (checkpoint_restore_ns_capable: EPERM)."""
    def may_restore(level_ns) -> bool:
        return creds.ns_capable(level_ns.user_ns, CAP_CHECKPOINT_RESTORE) or \
            creds.ns_capable(level_ns.user_ns, CAP_SYS_ADMIN)

    def taken_globally(nr: int) -> bool:
        return nr == 1 or nr in kernel.processes or any(
            t.tid == nr for p in kernel.processes.values() for t in p.threads)
    return plan_numbers(ns, set_tid, may_restore, taken_globally)


def unshare(kernel, proc, flags: int) -> None:
    """ksys_unshare's user and pid parts: unshare_userns (new credentials in a new user
    namespace, the caller's own from now on), then copy_pid_ns with the credentials the
    caller will have: CAP_SYS_ADMIN in their namespace (EPERM), and no second new pid
    namespace before the first has a process (EINVAL); the caller's children are born in it."""
    creds = child_creds(kernel, proc, flags & CLONE_NEWUSER)
    if flags & CLONE_NEWPID:
        if not creds.capable_here(CAP_SYS_ADMIN):
            raise GuestErrno(E.EPERM)
        if proc.pid_ns_for_children is not proc.pid_ns:
            raise GuestErrno(E.EINVAL)
        proc.pid_ns_for_children = new_namespace(kernel, proc.pid_ns, creds.user_ns)
    proc.net_ns = child_net_namespace(kernel, proc, creds, flags)
    proc.creds = creds


def setns(kernel, proc, kind: bytes, ns) -> None:
    """setns of a user or pid namespace file. userns_install: not the caller's own (EINVAL),
    by a single-threaded task not sharing its fs_struct (EINVAL), with CAP_SYS_ADMIN over it
    (EPERM); the caller then holds every capability there. pidns_install: CAP_SYS_ADMIN over
    its owner and the caller's own namespace (EPERM), the caller's namespace or one below it
    (EINVAL); the caller's children are born in it."""
    creds = proc.creds
    if kind == b"user":
        shares_fs = any(p.fs_struct is proc.fs_struct and p is not proc and p.state != "zombie"
                        for p in kernel.processes.values())
        if ns is creds.user_ns or len(proc.live_threads()) > 1 or shares_fs:
            raise GuestErrno(E.EINVAL)
        if not creds.ns_capable(ns, CAP_SYS_ADMIN):
            raise GuestErrno(E.EPERM)
        proc.creds = creds.in_new_namespace(ns)
        return
    owner = ns.user_ns if ns is not None else INITIAL_USER_NS
    if not (creds.ns_capable(owner, CAP_SYS_ADMIN) and creds.capable_here(CAP_SYS_ADMIN)):
        raise GuestErrno(E.EPERM)
    if kind == b"net":
        proc.net_ns = None if ns is None or ns.inum == INITIAL_NET_INUM else ns   # netns_install
        return
    if not ns.is_descendant_of(proc.pid_ns):
        raise GuestErrno(E.EINVAL)
    proc.pid_ns_for_children = ns
