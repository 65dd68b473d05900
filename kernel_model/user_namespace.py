"""User namespaces (kernel/user_namespace.c, security/commoncap.c cap_capable).

A task's credentials name the user namespace they live in. The ids they hold are the kernel's
(kuid, kgid: the initial namespace's numbers); a task sees them, and names ids, through its
namespace's maps (from_kuid, make_kuid), an id without a mapping showing as the overflow id
65534 (from_kuid_munged). A namespace's maps are written once, through /proc/PID/uid_map and
gid_map (map_write); each line maps `count` ids from `first` here to `lower` in the parent.

Capabilities are held in the credentials' namespace: a check asks for a capability over a
target namespace (ns_capable), which the task has when the target is its own namespace and
its effective set holds it, or when the target is a namespace below its own made by its
effective uid (the owner holds every capability there). capable() is ns_capable over the
initial namespace: a task of any other namespace has none of the machine's privileges.

clone and unshare(CLONE_NEWUSER) make one below the caller's (create_user_ns: at most 32 deep,
EUSERS; not from a chroot, EPERM), owned by the caller's effective ids, in which the new
credentials hold every capability (set_cred_user_ns).
"""
import struct

from . import errno as E
from .errno import GuestErrno

OVERFLOW_ID = 65534
MAX_USER_NS_LEVEL = 32
UID_GID_MAP_MAX_EXTENTS = 340
INITIAL_USER_NS_INUM = 0xEFFFFFFD     # PROC_USER_INIT_INO
CAP_SETUID, CAP_SETGID, CAP_SYS_ADMIN = 7, 6, 21
ID_LIMIT = 1 << 32


class UserNamespace:
    def __init__(self, inum: int, parent: "UserNamespace | None", owner: int = 0, group: int = 0):
        self.inum = inum
        self.parent = parent
        self.level = 0 if parent is None else parent.level + 1
        self.owner, self.group = owner, group            # the creator's euid and egid (kernel ids)
        # (first, lower first, count) extents; the initial namespace maps every id to itself
        full = ((0, 0, 0xFFFFFFFF),)
        self.uid_map: tuple = full if parent is None else ()
        self.gid_map: tuple = full if parent is None else ()
        self.setgroups_allowed = parent is None or parent.setgroups_allowed

    @property
    def initial(self) -> bool:
        return self.parent is None

    def ancestors(self):
        ns = self
        while ns is not None:
            yield ns
            ns = ns.parent


INITIAL = UserNamespace(INITIAL_USER_NS_INUM, None)


def _map_up(extents: tuple, lower: int) -> int | None:
    for first, lower_first, count in extents:
        if lower_first <= lower < lower_first + count:
            return first + lower - lower_first
    return None


def _map_down(extents: tuple, ident: int) -> int | None:
    for first, lower_first, count in extents:
        if first <= ident < first + count:
            return lower_first + ident - first
    return None


def from_kid(ns: UserNamespace, kid: int, which: str = "uid_map") -> int | None:
    """from_kuid / from_kgid: the kernel id as `ns` numbers it, None when unmapped."""
    if ns.initial:
        return kid
    above = from_kid(ns.parent, kid, which)
    return None if above is None else _map_up(getattr(ns, which), above)


def make_kid(ns: UserNamespace, ident: int, which: str = "uid_map") -> int | None:
    """make_kuid / make_kgid: the kernel id of `ns`'s id, None when unmapped."""
    if ns.initial:
        return ident
    above = _map_down(getattr(ns, which), ident)
    return None if above is None else make_kid(ns.parent, above, which)


def munged(ns: UserNamespace, kid: int, which: str = "uid_map") -> int:
    """from_kuid_munged: an unmapped id shows as the overflow id."""
    seen = from_kid(ns, kid, which)
    return OVERFLOW_ID if seen is None else seen


def ns_capable(creds, target: UserNamespace, cap: int) -> bool:
    """cap_capable(): walk up from the target to the credentials' namespace."""
    mine = creds.user_ns
    ns = target
    while ns is not None:
        if ns is mine:
            return bool(creds.effective >> cap & 1)
        if ns.level <= mine.level:
            return False
        if ns.parent is mine and ns.owner == creds.euid:
            return True                     # the owner of a child namespace has it all there
        ns = ns.parent
    return False


def create(kernel, creds, chrooted: bool) -> UserNamespace:
    """create_user_ns: below the credentials' namespace, owned by their effective ids."""
    parent = creds.user_ns
    if parent.level + 1 > MAX_USER_NS_LEVEL:
        raise GuestErrno(E.EUSERS)
    if chrooted:
        raise GuestErrno(E.EPERM)           # current_chrooted: no escape through a new root
    if from_kid(parent, creds.euid) is None or from_kid(parent, creds.egid, "gid_map") is None:
        raise GuestErrno(E.EPERM)
    return UserNamespace(next(kernel.ns_inums), parent, creds.euid, creds.egid)


def show_map(viewer_ns: UserNamespace, ns: UserNamespace, which: str) -> bytes:
    """uid_m_show: each extent as "%10u %10u %10u\n", its lower ids as the reader's namespace
    sees them (the parent's when the reader is in `ns` itself; (u32)-1 when unmapped)."""
    lower_ns = ns.parent if viewer_ns is ns and ns.parent is not None else viewer_ns
    lines = []
    for first, lower, count in getattr(ns, which):
        kid = lower if ns.parent is None else make_kid(ns.parent, lower, which)
        seen = from_kid(lower_ns, kid, which) if kid is not None else None
        lines.append(b"%10u %10u %10u\n" % (first, 0xFFFFFFFF if seen is None else seen, count))
    return b"".join(lines)


def parse_map(data: bytes) -> tuple:
    """map_write's parsing: lines of three numbers, every count positive, no wrap, no two
    extents overlapping on either side, at most 340 (EINVAL)."""
    extents = []
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        words = line.split()
        if len(words) != 3 or not all(w.isdigit() for w in words):
            raise GuestErrno(E.EINVAL)
        first, lower, count = (int(w) for w in words)
        if count == 0 or first + count > ID_LIMIT or lower + count > ID_LIMIT \
                or first + count - 1 == 0xFFFFFFFF or lower + count - 1 == 0xFFFFFFFF:
            raise GuestErrno(E.EINVAL)
        for f, lw, c in extents:
            if first < f + c and f < first + count or lower < lw + c and lw < lower + count:
                raise GuestErrno(E.EINVAL)
        extents.append((first, lower, count))
    if not extents or len(extents) > UID_GID_MAP_MAX_EXTENTS:
        raise GuestErrno(E.EINVAL)
    return tuple(extents)


def write_map(writer_creds, ns: UserNamespace, which: str, position: int, data: bytes) -> int:
    """map_write (proc_uid_map_write / proc_gid_map_write): once per namespace (EPERM),
    from the start (EINVAL), by a task of the namespace or its parent (EPERM), with
    CAP_SYS_ADMIN over the namespace; the lower ids must be mapped in
    the parent (EPERM) and the mapping permitted (new_idmap_permitted)."""
    if ns.parent is None:
        raise GuestErrno(E.EPERM)
    if writer_creds.user_ns is not ns and writer_creds.user_ns is not ns.parent:
        raise GuestErrno(E.EPERM)
    if getattr(ns, which):
        raise GuestErrno(E.EPERM)
    if position != 0:
        raise GuestErrno(E.EINVAL)
    extents = parse_map(data)
    if not ns_capable(writer_creds, ns, CAP_SYS_ADMIN):
        raise GuestErrno(E.EPERM)           # adjusting a namespace needs its CAP_SYS_ADMIN
    if not _permitted(writer_creds, ns, which, extents):
        raise GuestErrno(E.EPERM)
    # the lower ids are the parent namespace's, and must be mapped there
    if any(make_kid(ns.parent, lower, which) is None or make_kid(ns.parent, lower + count - 1, which) is None
           for _, lower, count in extents):
        raise GuestErrno(E.EPERM)
    setattr(ns, which, extents)
    return len(data)


def _own_id_only(creds, ns, which, extents) -> bool:
    return len(extents) == 1 and extents[0][2] == 1 and _maps_own_id(creds, ns, which, extents[0][1])


def _maps_own_id(creds, ns, which: str, lower: int) -> bool:
    if which == "uid_map":
        return ns.owner == creds.euid and make_kid(ns.parent, lower) == creds.euid
    return (ns.owner == creds.euid and not ns.setgroups_allowed
            and make_kid(ns.parent, lower, "gid_map") == creds.egid)


def _permitted(creds, ns, which: str, extents: tuple) -> bool:
    """new_idmap_permitted: one id, the writer's own (a gid only once setgroups is denied),
    or CAP_SETUID / CAP_SETGID over the parent namespace."""
    if _own_id_only(creds, ns, which, extents):
        return True
    return ns_capable(creds, ns.parent, CAP_SETUID if which == "uid_map" else CAP_SETGID)


def show_setgroups(ns: UserNamespace) -> bytes:
    return b"allow\n" if ns.setgroups_allowed else b"deny\n"


def write_setgroups(writer_creds, ns: UserNamespace, position: int, data: bytes) -> int:
    """proc_setgroups_write: "allow" or "deny" (EINVAL otherwise, and from a later position);
    denying is possible until the gid map is written, allowing once denied never (EPERM)."""
    if position != 0:
        raise GuestErrno(E.EINVAL)
    word = data.strip()
    if word not in (b"allow", b"deny"):
        raise GuestErrno(E.EINVAL)
    if word == b"allow":
        if not ns.setgroups_allowed:
            raise GuestErrno(E.EPERM)
    else:
        if ns.gid_map:
            raise GuestErrno(E.EPERM)       # no denying once the gid map let setgroups in
        ns.setgroups_allowed = False
    return len(data)


def pack_owner(ns: UserNamespace, viewer_ns: UserNamespace) -> bytes:
    """NS_GET_OWNER_UID's answer: the owner as the caller's namespace sees it."""
    return struct.pack("<I", munged(viewer_ns, ns.owner))
