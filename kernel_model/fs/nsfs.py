"""The sandbox's namespaces as files: /proc/PID/ns/* and what opening them gives (fs/nsfs.c,
fs/proc/namespaces.c, include/linux/proc_ns.h).

The initial namespaces are the sandbox's; unshare and clone make new time, pid and user
namespaces (kernel_model/time_namespace.py, pid_namespace.py, user_namespace.py), network ones
(net/namespace.py) and mount, UTS and IPC ones (process/namespaces.py), and a process's links
of those kinds name its own. Each is named by its kind and inode number,
"uts:[4026531838]", with Linux's fixed numbers for the initial namespaces (PROC_*_INIT_INO)
and, for the mount and network namespaces, which Linux numbers as it makes them, the ones a
booted host shows. Every process's /proc/PID/ns lists the same ten links; opening one gives a
namespace file (nsfs: a read-only regular file of that inode), which setns takes and which
answers the NS_* ioctls (ns_ioctl):

  NS_GET_USERNS     a new descriptor of the owning user namespace (a pid namespace's creator's,
                    a user namespace's parent; the initial one for the other kinds), EPERM
                    when it lies outside the caller's (ns_get_owner);
  NS_GET_PARENT     the parent of a pid or user namespace, EPERM above the caller's own
                    (pidns_get_parent, ns_get_owner); other kinds have no hierarchy (EINVAL);
  NS_GET_NSTYPE     the CLONE_NEW* flag of its kind;
  NS_GET_OWNER_UID  a user namespace's owner as the caller sees it, EINVAL for other kinds;
anything else is ENOTTY.
"""
from .. import errno as E
from ..errno import GuestErrno
from .constants import BLOCK_SIZE, O_RDONLY, S_IFREG
from .records import StatResult
from .unseekable import Unseekable
from ..user_namespace import INITIAL as INITIAL_USER_NS, pack_owner

NSFS_DEV = 0x04                  # st_dev of nsfs inodes (0:4), as the host shows them
CLONE_NEWTIME, CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS = 0x80, 0x20000, 0x02000000, 0x04000000
CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x08000000, 0x10000000, 0x20000000, 0x40000000

# kind -> (CLONE_NEW* flag, inode number)
KINDS = {
    b"cgroup": (CLONE_NEWCGROUP, 0xEFFFFFFB), b"ipc": (CLONE_NEWIPC, 0xEFFFFFFF),
    b"mnt": (CLONE_NEWNS, 0xEFFFFFF8), b"net": (CLONE_NEWNET, 0xEFFFFFF9),
    b"pid": (CLONE_NEWPID, 0xEFFFFFFC), b"time": (CLONE_NEWTIME, 0xEFFFFFFA),
    b"user": (CLONE_NEWUSER, 0xEFFFFFFD), b"uts": (CLONE_NEWUTS, 0xEFFFFFFE),
}
# /proc/PID/ns's entries, in proc_ns_dir_readdir's order, and the kind each names
LINKS = ((b"cgroup", b"cgroup"), (b"ipc", b"ipc"), (b"mnt", b"mnt"), (b"net", b"net"),
         (b"pid", b"pid"), (b"pid_for_children", b"pid"), (b"time", b"time"),
         (b"time_for_children", b"time"), (b"user", b"user"), (b"uts", b"uts"))
HIERARCHICAL = (b"pid", b"user")
NS_GET_USERNS, NS_GET_PARENT, NS_GET_NSTYPE, NS_GET_OWNER_UID = 0xB701, 0xB702, 0xB703, 0xB704


def link_text(kind: bytes, inum: int | None = None) -> bytes:
    """What readlink of /proc/PID/ns/NAME gives (ns_get_name): "KIND:[INODE]"."""
    return b"%s:[%d]" % (kind, KINDS[kind][1] if inum is None else inum)


class NamespaceFile(Unseekable):
    """An open namespace file (nsfs)."""

    is_tty = False

    def __init__(self, kind: bytes, ns=None):
        """`ns`: the namespace object, for the kinds a process may have others of (a time
        namespace: kernel_model/time_namespace.py); None for the sandbox's one."""
        self.kind = kind
        self.ns = ns
        self.inum = KINDS[kind][1] if ns is None else ns.inum
        self.flags = O_RDONLY
        self.path = self.proc_link = link_text(kind, self.inum)
        self.closed = False

    @property
    def ns_type(self) -> int:
        return KINDS[self.kind][0]

    def read(self, n: int) -> bytes:
        raise GuestErrno(E.EINVAL)          # ns_file_operations: no read

    def write(self, data: bytes) -> int:
        raise GuestErrno(E.EINVAL)

    def poll_events(self) -> int:
        return 0

    def stat(self) -> StatResult:
        return StatResult(NSFS_DEV, self.inum, S_IFREG | 0o444, 1, 0, 0, 0, 0,
                          BLOCK_SIZE, 0, 0, 0, 0)

    def close(self) -> None:
        self.closed = True

    def ioctl(self, ctx, request: int, arg: int) -> int:
        """ns_ioctl()."""
        if request == NS_GET_NSTYPE:
            return self.ns_type
        if request == NS_GET_USERNS:
            owner = self._owner()
            if owner is None or not _sees(ctx.proc.creds.user_ns, owner):
                raise GuestErrno(E.EPERM)
            return _open_related(ctx, b"user", owner)
        if request == NS_GET_PARENT:
            if self.kind not in HIERARCHICAL:
                raise GuestErrno(E.EINVAL)
            parent = getattr(self.ns, "parent", None)
            mine = ctx.proc.pid_ns if self.kind == b"pid" else ctx.proc.creds.user_ns
            if parent is None or not _sees(mine, parent):
                raise GuestErrno(E.EPERM)
            return _open_related(ctx, self.kind, parent)
        if request == NS_GET_OWNER_UID:
            if self.kind != b"user":
                raise GuestErrno(E.EINVAL)
            ctx.write(arg, pack_owner(self.ns or INITIAL_USER_NS, ctx.proc.creds.user_ns))
            return 0
        raise GuestErrno(E.ENOTTY)

    def _owner(self):
        """The user namespace owning this one (ns_ops->owner): none above the initial."""
        if self.kind == b"user":
            return (self.ns or INITIAL_USER_NS).parent
        return getattr(self.ns, "user_ns", None) or INITIAL_USER_NS


def _sees(mine, ns) -> bool:
    """`ns` is the caller's namespace or below it (the walk up from ns reaches mine)."""
    while ns is not None:
        if ns is mine:
            return True
        ns = ns.parent
    return False


def _open_related(ctx, kind: bytes, ns) -> int:
    """open_related_ns(): a new read-only, close-on-exec descriptor of that namespace."""
    fd = ctx.proc.fds.lowest_free()
    return ctx.proc.fds.install(NamespaceFile(kind, ns), at=fd, cloexec=True)
