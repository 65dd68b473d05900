"""request_key's construction of a key it did not find (security/keys/request_key.c).

With callout information and no key found, Linux makes the key uninstantiated in a
destination keyring and asks /sbin/request-key to instantiate it (call_sbin_request_key). The
sandbox runs no helper for the kernel: it answers as a system without /sbin/request-key, whose
upcall fails with ENOENT, after which the key is negatively instantiated for
key_negative_timeout (60 s): it stays linked, reading it or finding it again is ENOKEY
(key->state), and it expires. The destination is the one given, else the requester's default
(KEYCTL_SET_REQKEY_KEYRING: construct_get_dest_keyring walks thread, process, session, user
session), on which the caller needs write permission (EACCES, CVE-2017-17807).
"""
from .. import errno as E
from ..errno import GuestErrno
from . import quota
from .key import WRITE
from .lookup import PROCESS, SESSION, THREAD, USER, USER_SESSION, lookup

NEGATIVE_TIMEOUT_NS = 60 * 1_000_000_000       # key_negative_timeout
DEFL_DEFAULT, DEFL_THREAD, DEFL_PROCESS, DEFL_SESSION = 0, 1, 2, 3
DEFL_USER, DEFL_USER_SESSION, DEFL_REQUESTOR = 4, 5, 7
# where each default starts in construct_get_dest_keyring's fall-through switch
_WALK = {DEFL_DEFAULT: (THREAD, PROCESS, SESSION, USER_SESSION),
         DEFL_REQUESTOR: (THREAD, PROCESS, SESSION, USER_SESSION),
         DEFL_THREAD: (THREAD, PROCESS, SESSION, USER_SESSION),
         DEFL_PROCESS: (PROCESS, SESSION, USER_SESSION), DEFL_SESSION: (SESSION, USER_SESSION),
         DEFL_USER_SESSION: (USER_SESSION,), DEFL_USER: (USER,)}


def default_destination(table, caller):
    """The first of the default's keyrings the requester has (none made on the way but the
    user keyrings, which look_up_user_keyrings makes), with write permission checked."""
    for special in _WALK[table.reqkey_defaults.get(caller.tgid, DEFL_DEFAULT)]:
        if special == SESSION and not caller.creds.session_keyring:
            continue
        try:
            keyring, _ = lookup(table, caller, special, create=special in (USER, USER_SESSION))
        except GuestErrno as missing:
            if missing.errno == E.ENOKEY:
                continue
            raise
        if not keyring.rights(caller.fsuid, caller.in_group, True) & WRITE:
            raise GuestErrno(E.EACCES)
        return keyring
    return None


def construct(table, caller, ktype, description: bytes, destination, now_ns: int):
    """construct_key_and_link: a new key in `destination` (or the default), its upcall
    failing: the key negative, ENOENT for the caller."""
    if destination is None:
        destination = default_destination(table, caller)
    creds = caller.creds
    if destination is not None:
        quota.check_link(table, destination, _Probe(ktype.name, description))
    quota.check_new_key(table, creds.fsuid, description, 0)
    key = table.new(ktype.name, description, creds.fsuid, creds.fsgid, ktype.default_perm())
    if destination is not None:
        table.link(destination, key)
    key.negative_errno = E.ENOKEY                 # key_negate_and_link
    key.expiry_ns = now_ns + NEGATIVE_TIMEOUT_NS
    raise GuestErrno(E.ENOENT)                    # call_usermodehelper: no /sbin/request-key


class _Probe:
    """A key not made yet, as check_link compares it (type and description)."""
    serial = 0

    def __init__(self, type_name: str, description: bytes):
        self.type, self.description = type_name, description
