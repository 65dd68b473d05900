"""Discretionary access control: may this process read, write or search this inode?

fs/namei.c generic_permission: the owner's bits if the file-system uid owns the inode, else
the group's if the file-system gid or a supplementary group is its group, else the others';
then the capabilities override (capable_wrt_inode_uidgid): CAP_DAC_READ_SEARCH reads any file
and searches or lists any directory, CAP_DAC_OVERRIDE writes anything and executes a file
that has at least one x bit. Root holds both (process/creds.py), so for root only the x rule
remains, as before credentials were modeled.

The file system asks through an Access, built from the calling ProcessView's credentials (a
view without them, as the unit tests' fakes, is root).
"""
from dataclasses import dataclass, replace

from .. import errno as E
from ..errno import GuestErrno
from ..creds import (CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER,
                             CAP_FSETID, ROOT, Credentials)
from .constants import S_IFDIR, S_IFMT, S_ISGID, S_ISVTX
from ..user_namespace import from_kid
from .inode_flags import FS_IMMUTABLE_FL
from .records import StatResult

MAY_EXEC, MAY_WRITE, MAY_READ = 1, 2, 4
NO_ID = 0xFFFFFFFF


@dataclass(frozen=True)
class Access:
    creds: Credentials = ROOT
    groups: tuple = ()

    @property
    def searches_anything(self) -> bool:
        return self.creds.capable(CAP_DAC_READ_SEARCH)

    def capable_over(self, st: StatResult, cap: int) -> bool:
        """capable_wrt_inode_uidgid: the capability in the caller's user namespace, over an
        inode whose owner and group that namespace maps (user_namespace.py); the machine's
        capability in the initial one."""
        creds = self.creds
        if creds.user_ns.initial:
            return creds.capable(cap)
        return creds.capable_here(cap) and from_kid(creds.user_ns, st.uid) is not None \
            and from_kid(creds.user_ns, st.gid, "gid_map") is not None

    def in_group(self, gid: int) -> bool:
        return gid == self.creds.fsgid or gid in self.groups

    def allowed(self, st: StatResult, mask: int) -> bool:
        mode, creds = st.mode, self.creds
        if creds.fsuid == st.uid:
            bits = mode >> 6
        elif st.acl is not None and mode & 0o070:
            # acl_permission_check: an access ACL decides for everybody but the owner
            # (check_acl, posix_acl.py's permission); capabilities may still override it
            from .posix_acl import permission
            bits = 7 if permission(st.acl, self, st, mask) else 0
        elif self.in_group(st.gid):
            bits = mode >> 3
        else:
            bits = mode
        if not mask & ~bits & 7:
            return True
        if (mode & S_IFMT) == S_IFDIR:
            if not mask & MAY_WRITE and self.capable_over(st, CAP_DAC_READ_SEARCH):
                return True
            return self.capable_over(st, CAP_DAC_OVERRIDE)
        if mask == MAY_READ and self.capable_over(st, CAP_DAC_READ_SEARCH):
            return True
        return self.capable_over(st, CAP_DAC_OVERRIDE) and (not mask & MAY_EXEC or bool(mode & 0o111))

    def check(self, st: StatResult, mask: int) -> None:
        if mask & MAY_WRITE and st.iflags & FS_IMMUTABLE_FL:
            raise GuestErrno(E.EPERM)           # inode_permission: IS_IMMUTABLE, before the mode
        if not self.allowed(st, mask):
            raise GuestErrno(E.EACCES)

    # --- ownership (fs/attr.c, fs/inode.c) -------------------------------------------------
    def owns(self, st: StatResult) -> bool:
        """inode_owner_or_capable: the file-system uid owns it, or CAP_FOWNER."""
        return self.creds.fsuid == st.uid or self.capable_over(st, CAP_FOWNER)

    def check_owner(self, st: StatResult) -> None:
        if not self.owns(st):
            raise GuestErrno(E.EPERM)

    def chmod_mode(self, st: StatResult, mode: int) -> int:
        """setattr_prepare/chmod_common: the owner (or CAP_FOWNER) only, EPERM; S_ISGID is
        dropped when the caller is not in the file's group and lacks CAP_FSETID."""
        self.check_owner(st)
        if mode & S_ISGID and not self.in_group(st.gid) and not self.capable_over(st, CAP_FSETID):
            mode &= ~S_ISGID
        return mode

    def check_chown(self, st: StatResult, uid: int, gid: int) -> None:
        """chown_ok/chgrp_ok: a new owner needs CAP_CHOWN; a new group needs CAP_CHOWN or the
        owner giving it one of its own groups. EPERM otherwise."""
        capable = self.capable_over(st, CAP_CHOWN)
        if uid != NO_ID and uid != st.uid and not capable:
            raise GuestErrno(E.EPERM)
        if gid != NO_ID and gid != st.gid and not capable:
            if self.creds.fsuid != st.uid or not self.in_group(gid):
                raise GuestErrno(E.EPERM)

    def check_sticky(self, directory: StatResult, victim: StatResult) -> None:
        """may_delete's check_sticky: in a sticky directory only the file's or the directory's
        owner (or CAP_FOWNER) removes or renames a name, EPERM."""
        if directory.mode & S_ISVTX and self.creds.fsuid not in (victim.uid, directory.uid) \
                and not self.capable_over(victim, CAP_FOWNER):
            raise GuestErrno(E.EPERM)

    def new_owner(self, directory: StatResult) -> tuple[int, int, bool]:
        """inode_init_owner: (uid, gid, inherit S_ISGID) of a new inode in `directory`: the
        file-system ids, or the directory's group when it is set-group-ID."""
        if directory.mode & S_ISGID:
            return self.creds.fsuid, directory.gid, True
        return self.creds.fsuid, self.creds.fsgid, False


ROOT_ACCESS = Access()


def access_of(proc) -> Access:
    """The Access of a ProcessView: its `creds` and `groups` if it has them, else root's."""
    creds = getattr(proc, "creds", None)
    return ROOT_ACCESS if creds is None else Access(creds, tuple(getattr(proc, "groups", ())))


def real_access(proc) -> Access:
    """access(2)/faccessat(2) without AT_EACCESS (fs/open.c access_override_creds): the real
    ids stand in for the file-system ones, and only a real uid of 0 keeps capabilities."""
    access = access_of(proc)
    creds = access.creds
    effective = creds.permitted if creds.uid == 0 else 0
    return Access(replace(creds, fsuid=creds.uid, fsgid=creds.gid, effective=effective),
                  access.groups)


def searcher(access: Access):
    """The Walker's search check (namei.py): None when the caller searches every directory
    (root)."""
    if access.searches_anything:
        return None
    return lambda directory: access.check(directory.stat(), MAY_EXEC)
