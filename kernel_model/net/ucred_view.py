"""struct ucred across namespaces (net/core/scm.c, net/core/sock.c): the model keeps a
message's and a peer's credentials in kernel terms (global pid, kernel uid and gid); a
process gives them in its own namespaces' numbers (scm_check_creds: find_get_pid, make_kuid;
an id its user namespace does not map is EINVAL) and reads them in its own (scm_recv and
cred_to_ucred: pid_vnr, 0 for a sender outside its pid namespace; from_kuid_munged, 65534 for
an unmapped id; the -1 ids of no peer stay -1)."""
from .. import errno as E
from ..errno import GuestErrno
from ..pid_namespace import global_pid
from ..user_namespace import make_kid, munged
from .message import Credentials

NO_ID = 0xFFFFFFFF


def _initial(proc) -> bool:
    """A process of the initial pid and user namespaces (or a test's view without them)."""
    pid_ns, own = getattr(proc, "pid_ns", None), getattr(proc, "creds", None)
    return (pid_ns is None or pid_ns.initial) and (own is None or own.user_ns.initial)


def as_seen_by(proc, creds: Credentials) -> Credentials:
    if _initial(proc):
        return creds
    user_ns = proc.creds.user_ns
    return Credentials(proc.pid_ns.nr(creds.pid) if creds.pid > 0 else creds.pid,
                       creds.uid if creds.uid == NO_ID else munged(user_ns, creds.uid),
                       creds.gid if creds.gid == NO_ID else munged(user_ns, creds.gid, "gid_map"))


def from_sender(proc, creds: Credentials) -> Credentials:
    if _initial(proc):
        return creds
    user_ns = proc.creds.user_ns
    uid, gid = make_kid(user_ns, creds.uid), make_kid(user_ns, creds.gid, "gid_map")
    if uid is None or gid is None:
        raise GuestErrno(E.EINVAL)
    return Credentials(global_pid(proc, creds.pid) if creds.pid > 0 else creds.pid, uid, gid)
