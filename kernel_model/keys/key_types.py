"""The key types the model registers (security/keys/keyring.c, user_defined.c): "keyring",
"user" and "logon". Any other type name is one no module provides: ENODEV, as Linux answers
for a type it cannot find (key_type_lookup), asymmetric, big_key and dns_resolver among them.

`preparse` checks a new payload as each type's .preparse does; `readable` is whether the type
has .read (a logon key's payload never goes back to user space); `updatable` whether it has
.update (a keyring has none: KEYCTL_UPDATE is EOPNOTSUPP).
"""
from dataclasses import dataclass

from .. import errno as E
from ..errno import GuestErrno
from .key import ALL, POS_SHIFT, READ, SEARCH, SETATTR, USR_SHIFT, VIEW, WRITE, LINK

USER_PAYLOAD_MAX = 32767


@dataclass(frozen=True)
class KeyType:
    name: str
    readable: bool
    updatable: bool

    def preparse(self, description: bytes | None, payload: bytes | None) -> bytes:
        if self.name == "keyring":
            if payload:
                raise GuestErrno(E.EINVAL)        # keyring_preparse: no payload
            return b""
        if self.name == "logon" and description is not None:
            colon = description.find(b":")
            if colon <= 0:
                raise GuestErrno(E.EINVAL)        # logon_vet_description: "service:..."
        if payload is None or not 0 < len(payload) <= USER_PAYLOAD_MAX:
            raise GuestErrno(E.EINVAL)            # user_preparse
        return payload

    def default_perm(self) -> int:
        """key_create_or_update's KEY_PERM_UNDEF: the possessor may view, search, link and set
        attributes, read if the type reads, write if it updates (or is a keyring); the owner
        may view."""
        possessor = VIEW | SEARCH | LINK | SETATTR
        possessor |= READ if self.readable else 0
        possessor |= WRITE if self.updatable or self.name == "keyring" else 0
        return possessor << POS_SHIFT | VIEW << USR_SHIFT


TYPES = {t.name: t for t in (KeyType("keyring", readable=True, updatable=False),
                             KeyType("user", readable=True, updatable=True),
                             KeyType("logon", readable=False, updatable=True))}


def key_type(name: str) -> KeyType:
    found = TYPES.get(name)
    if found is None:
        raise GuestErrno(E.ENODEV)
    return found


SPECIAL_KEYRING_PERM = ALL << POS_SHIFT | VIEW << USR_SHIFT           # thread, process keyrings
SESSION_KEYRING_PERM = ALL << POS_SHIFT | (VIEW | READ) << USR_SHIFT
USER_KEYRING_PERM = ALL << POS_SHIFT | ALL << USR_SHIFT
