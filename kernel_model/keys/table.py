"""The run's keys by serial, and the keyrings each user, process and thread has
(security/keys/process_keys.c).

Serials are positive 32-bit numbers; Linux draws them at random (key_alloc_serial), the model
counts up from a fixed first one, so a run shows the same serials every time. The user keyring
"_uid.N" and user session keyring "_uid_ses.N" exist once per uid, made on first use. The
thread keyring ("_tid") is per thread and the process keyring ("_pid") per thread group, made
when first asked for with KEY_LOOKUP_CREATE; neither is inherited by fork (copy_creds). The
session keyring is in the credentials (Credentials.session_keyring), which fork and exec keep.
"""
from .. import errno as E
from ..errno import GuestErrno
from .key import Key
from .key_types import SESSION_KEYRING_PERM, SPECIAL_KEYRING_PERM, USER_KEYRING_PERM
from .quota import DEFAULT_LIMITS

FIRST_SERIAL = 0x1F2E3D4C


class KeyTable:
    def __init__(self):
        self.keys: dict[int, Key] = {}
        self._next = FIRST_SERIAL
        self._user_keyrings: dict[tuple[str, int], int] = {}   # ("_uid"/"_uid_ses", uid)
        self.thread_keyrings: dict[int, int] = {}             # tid -> serial
        self.process_keyrings: dict[int, int] = {}            # tgid -> serial
        self.reqkey_defaults: dict[int, int] = {}             # tgid -> KEY_REQKEY_DEFL_*
        self.quota_limits = dict(DEFAULT_LIMITS)              # /proc/sys/kernel/keys/*

    def new(self, type_name: str, description: bytes, uid: int, gid: int, perm: int,
            payload: bytes = b"") -> Key:
        serial = self._next
        self._next = self._next + 1 if self._next < 0x7FFFFFFF else 3
        key = Key(serial, type_name, description, uid, gid, perm, payload)
        self.keys[serial] = key
        return key

    def new_keyring(self, description: bytes, uid: int, gid: int,
                    perm: int = SESSION_KEYRING_PERM) -> Key:
        return self.new("keyring", description, uid, gid, perm)

    def get(self, serial: int) -> Key:
        key = self.keys.get(serial)
        if key is None:
            raise GuestErrno(E.ENOKEY)
        return key

    def user_keyring(self, uid: int, session: bool) -> Key:
        """look_up_user_keyrings(): made on first use, the session one linking the other."""
        name = "_uid_ses" if session else "_uid"
        serial = self._user_keyrings.get((name, uid))
        if serial is None:
            keyring = self.new_keyring(b"%s.%d" % (name.encode(), uid), uid, 0, USER_KEYRING_PERM)
            serial = self._user_keyrings[(name, uid)] = keyring.serial
            if session:
                keyring.links.append(self.user_keyring(uid, session=False).serial)
        return self.keys[serial]

    def existing_user_keyring(self, uid: int, session: bool) -> Key | None:
        serial = self._user_keyrings.get(("_uid_ses" if session else "_uid", uid))
        return self.keys.get(serial) if serial is not None else None

    def special(self, owners: dict[int, int], owner: int, description: bytes, uid: int,
                gid: int, create: bool) -> Key:
        """The thread or process keyring of `owner` (a tid or tgid): ENOKEY until created."""
        serial = owners.get(owner)
        if serial is None:
            if not create:
                raise GuestErrno(E.ENOKEY)
            serial = owners[owner] = self.new_keyring(description, uid, gid,
                                                      SPECIAL_KEYRING_PERM).serial
        return self.keys[serial]

    def link(self, keyring: Key, key: Key) -> None:
        """__key_link(): a key of the same type and description is replaced in place."""
        if not keyring.is_keyring:
            raise GuestErrno(E.ENOTDIR)
        for i, serial in enumerate(keyring.links):
            other = self.keys.get(serial)
            if serial == key.serial:
                return
            if other is not None and (other.type, other.description) == (key.type, key.description):
                keyring.links[i] = key.serial
                return
        keyring.links.append(key.serial)

    def reachable(self, roots: list[Key]) -> list[Key]:
        """Every key linked from `roots`, depth first in link order, each once (the search of
        search_nested_keyrings, without its depth limit of 6, which the model never reaches)."""
        seen: set[int] = set()
        order: list[Key] = []
        stack = list(reversed(roots))
        while stack:
            key = stack.pop()
            if key.serial in seen:
                continue
            seen.add(key.serial)
            order.append(key)
            if key.is_keyring:
                stack.extend(self.keys[s] for s in reversed(key.links) if s in self.keys)
        return order
