"""A process's credentials (include/linux/cred.h struct cred) and the rules that change them.

Real, effective, saved and file-system user and group ids, and the effective and permitted
capability sets.

One model of privilege for every call: the guest's root is the modeled machine's root, as the
host's root that runs LTP natively is. It holds every capability, and a check is capable()
on the caller's effective set over the initial user namespace: a task in a user namespace of
its own (user_namespace.py) holds its capabilities there (ns_capable, capable_here), none of
the machine's. What a capability allows changes the modeled
machine only: nice values, scheduling policies and I/O classes (priority.py, sched_policy.py,
sched_attr.py), the UTS names, Ctrl-Alt-Del's setting (reboot.py), the IPC, key and inotify
limits, the kernel log (syslog.py: an empty log), a time namespace for its children
(time_namespace.py), in-memory mounts and new mount, UTS and IPC namespaces (syscalls/impls/
mount.py, process/namespaces.py). A few requests stay refused whatever the capabilities, because the model
has nothing for them to act on or they would reach past the sandbox: setting the clock (the
virtual clock moves only with the run: clockset.py), ending the machine (reboot's halt,
restart, power-off, kexec), mounts of the host's file systems (mount.py), swap and the new
namespaces of the kinds not modeled (admin.py). They answer EPERM after Linux's own argument checks, as a security module's hook
refuses (security_settime64, security_sb_mount...), not as a missing capability.

The set*id calls follow kernel/sys.c, and the capability sets follow the
ids as security/commoncap.c cap_task_fix_setuid does (no securebits are modeled): losing every
root uid clears them, an effective uid leaving 0 clears the effective set, returning to 0
restores it from the permitted one, and the file-system uid carries the file-system
capabilities alone. Supplementary groups stay in Process.groups (setgroups).

Ids are 32-bit; (uid_t)-1 is "unchanged" for the calls that take it and invalid as an id.
"""
from dataclasses import dataclass, replace

from .user_namespace import INITIAL as INITIAL_USER_NS, UserNamespace, make_kid, ns_capable

CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER, CAP_FSETID = 0, 1, 2, 3, 4
CAP_KILL, CAP_SETGID, CAP_SETUID, CAP_SETPCAP, CAP_LINUX_IMMUTABLE = 5, 6, 7, 8, 9
CAP_NET_BIND_SERVICE, CAP_NET_ADMIN = 10, 12
CAP_SYS_ADMIN, CAP_SYS_BOOT, CAP_SYS_RESOURCE, CAP_MKNOD, CAP_MAC_OVERRIDE = 21, 22, 24, 27, 32
CAP_LAST_CAP = 40                              # Linux 6.1's CAP_CHECKPOINT_RESTORE
ALL_CAPS = (1 << (CAP_LAST_CAP + 1)) - 1
# include/linux/capability.h CAP_FS_SET: what follows the file-system uid
CAP_FS_SET = sum(1 << c for c in (CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER,
                                  CAP_FSETID, CAP_LINUX_IMMUTABLE, CAP_MKNOD, CAP_MAC_OVERRIDE))
NO_ID = 0xFFFFFFFF                             # (uid_t)-1


@dataclass(frozen=True)
class Credentials:
    """A task's ids and capability sets (struct cred): replaced, never changed in place."""
    uid: int = 0
    euid: int = 0
    suid: int = 0
    fsuid: int = 0
    gid: int = 0
    egid: int = 0
    sgid: int = 0
    fsgid: int = 0
    effective: int = ALL_CAPS
    permitted: int = ALL_CAPS
    inheritable: int = 0
    # The session keyring's serial (kernel_model/keys), 0 for none: Linux keeps it in struct
    # cred, so fork and exec keep it and KEYCTL_JOIN_SESSION_KEYRING replaces it.
    session_keyring: int = 0
    # The user namespace the capabilities are held in (user_namespace.py); ids stay kernel ids.
    user_ns: UserNamespace = INITIAL_USER_NS

    def capable(self, cap: int) -> bool:
        """capable(): the capability over the initial user namespace, the machine's."""
        return self.user_ns is INITIAL_USER_NS and bool(self.effective >> cap & 1)

    def ns_capable(self, ns: UserNamespace, cap: int) -> bool:
        return ns_capable(self, ns, cap)

    def capable_here(self, cap: int) -> bool:
        """ns_capable(current_user_ns(), cap): over the credentials' own namespace."""
        return bool(self.effective >> cap & 1)

    def in_new_namespace(self, ns: UserNamespace) -> "Credentials":
        """set_cred_user_ns: every capability, in the new namespace."""
        return replace(self, user_ns=ns, effective=ALL_CAPS, permitted=ALL_CAPS, inheritable=0)

    def with_ids(self, **ids) -> "Credentials":
        """These ids changed, the capability sets fixed up as cap_task_fix_setuid does."""
        new = replace(self, **ids)
        if set(ids) == {"fsuid"}:                     # LSM_SETID_FS: setfsuid
            return _fix_fsuid(self, new)
        if any(k in ids for k in ("uid", "euid", "suid")):
            return _fix_setuid(self, new)             # LSM_SETID_ID, _RE, _RES
        return new

    def with_sets(self, effective: int, permitted: int, inheritable: int) -> "Credentials":
        return replace(self, effective=effective, permitted=permitted, inheritable=inheritable)

    def after_exec(self, *, euid: int | None = None, egid: int | None = None) -> "Credentials":
        """execve (fs/exec.c, commoncap.c cap_bprm_creds_from_file): a set-user-ID or
        set-group-ID file's owner becomes the effective id (`euid`, `egid`: binprm.set_ids);
        the saved and file-system ids become the effective ones; root (a real or effective uid
        of 0) gets the full permitted set, effective only if its effective uid is 0; anybody
        else has none."""
        new_euid = self.euid if euid is None else euid
        new_egid = self.egid if egid is None else egid
        root_uid = make_kid(self.user_ns, 0)     # its namespace's root (root_privileged)
        root = root_uid is not None and root_uid in (self.uid, new_euid)
        permitted = ALL_CAPS if root else 0
        return replace(self, euid=new_euid, egid=new_egid, suid=new_euid, fsuid=new_euid,
                       sgid=new_egid, fsgid=new_egid, permitted=permitted,
                       effective=permitted if root and new_euid == root_uid else 0)


def _fix_setuid(old: Credentials, new: Credentials) -> Credentials:
    """commoncap.c cap_emulate_setxuid."""
    permitted, effective = new.permitted, new.effective
    if 0 in (old.uid, old.euid, old.suid) and 0 not in (new.uid, new.euid, new.suid):
        permitted = effective = 0
    if old.euid == 0 and new.euid != 0:
        effective = 0
    if old.euid != 0 and new.euid == 0:
        effective = permitted
    return replace(new, permitted=permitted, effective=effective)


def _fix_fsuid(old: Credentials, new: Credentials) -> Credentials:
    """cap_task_fix_setuid, LSM_SETID_FS: only the file-system capabilities follow fsuid."""
    if old.fsuid == 0 and new.fsuid != 0:
        return replace(new, effective=new.effective & ~CAP_FS_SET)
    if old.fsuid != 0 and new.fsuid == 0:
        return replace(new, effective=new.effective | (new.permitted & CAP_FS_SET))
    return new


ROOT = Credentials()
