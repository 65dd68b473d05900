"""lookup_user_key() (security/keys/process_keys.c): from a key id a call was given to the key,
whether the caller possesses it, and the permission check the call needs.

The special ids name the caller's keyrings (include/uapi/linux/keyctl.h): -1 thread, -2
process, -3 session, -4 user, -5 user session; -6 (group) is EINVAL, as is any id below 1
otherwise. With `create`, a missing thread or process keyring is made, and a process without a
session keyring joins a new one; without it, a process with no session keyring searches its
user session keyring. A positive id must be a key (ENOKEY); it is possessed when the caller's
keyrings reach it. A revoked key is EKEYREVOKED, an expired one EKEYEXPIRED.
"""
from dataclasses import dataclass, replace
from typing import Callable

from .. import errno as E
from ..errno import GuestErrno
from .key import Key
from .table import KeyTable

THREAD, PROCESS, SESSION, USER, USER_SESSION, GROUP = -1, -2, -3, -4, -5, -6


@dataclass
class Caller:
    """The calling thread as the keys code sees it."""
    tid: int
    tgid: int
    creds: object                       # Credentials
    in_group: Callable[[int], bool]
    set_creds: Callable[[object], None]
    now_ns: int

    @property
    def fsuid(self) -> int:
        return self.creds.fsuid


def session_keyring(table: KeyTable, caller: Caller) -> Key | None:
    serial = caller.creds.session_keyring
    return table.keys.get(serial) if serial else None


def join_session(table: KeyTable, caller: Caller, name: bytes | None) -> Key:
    """join_session_keyring(): a new anonymous "_ses", or the keyring of that name if the
    caller may search one (find_keyring_by_name), else a new one of that name."""
    creds = caller.creds
    keyring = None
    if name is not None:
        keyring = next((k for k in table.keys.values() if k.is_keyring and k.description == name
                        and not k.revoked and k.rights(creds.fsuid, caller.in_group, False) & 0x08),
                       None)
    if keyring is None:
        keyring = table.new_keyring(name if name is not None else b"_ses", creds.fsuid, creds.fsgid)
    caller.creds = replace(creds, session_keyring=keyring.serial)
    caller.set_creds(caller.creds)
    return keyring


def own_keyrings(table: KeyTable, caller: Caller) -> list[Key]:
    """The keyrings search_process_keyrings() starts from: thread, process, then session (or,
    when there is none, the user session keyring if it exists: get_user_session_keyring_rcu
    finds it without making it, so a search creates no key)."""
    found = [table.keys[owners[who]] for owners, who in ((table.thread_keyrings, caller.tid),
                                                         (table.process_keyrings, caller.tgid))
             if who in owners and owners[who] in table.keys]
    session = session_keyring(table, caller)
    if session is None:
        session = table.existing_user_keyring(caller.fsuid, session=True)
    return found + ([session] if session is not None else [])


def possessed(table: KeyTable, caller: Caller, key: Key) -> bool:
    return any(k.serial == key.serial for k in table.reachable(own_keyrings(table, caller)))


def special_keyring(table: KeyTable, caller: Caller, key_id: int, create: bool) -> Key:
    creds = caller.creds
    if key_id == THREAD:
        return table.special(table.thread_keyrings, caller.tid, b"_tid", creds.fsuid,
                             creds.fsgid, create)
    if key_id == PROCESS:
        return table.special(table.process_keyrings, caller.tgid, b"_pid", creds.fsuid,
                             creds.fsgid, create)
    if key_id == SESSION:
        session = session_keyring(table, caller)
        if session is not None:
            return session
        if create:
            return join_session(table, caller, None)
        return table.user_keyring(creds.fsuid, session=True)
    if key_id in (USER, USER_SESSION):
        return table.user_keyring(creds.fsuid, session=key_id == USER_SESSION)
    raise GuestErrno(E.EINVAL)


def lookup(table: KeyTable, caller: Caller, key_id: int, *, create: bool = False,
           need: int = 0, partial: bool = False) -> tuple[Key, bool]:
    """(the key, whether the caller possesses it); EACCES when the rights `need` are missing.
    `partial` (KEY_LOOKUP_PARTIAL) lets a revoked or expired key through, as revoke and
    setperm and unlink do."""
    if key_id < 0:
        key, held = special_keyring(table, caller, key_id, create), True
    elif key_id == 0:
        raise GuestErrno(E.EINVAL)
    else:
        key = table.get(key_id)
        held = possessed(table, caller, key)
    if not partial:
        check_valid(key, caller.now_ns)
    if need and key.rights(caller.fsuid, caller.in_group, held) & need != need:
        raise GuestErrno(E.EACCES)
    return key, held


def check_valid(key: Key, now_ns: int) -> None:
    """key_validate(): revoked, then expired."""
    if key.revoked:
        raise GuestErrno(E.EKEYREVOKED)
    if key.expiry_ns is not None and now_ns >= key.expiry_ns:
        raise GuestErrno(E.EKEYEXPIRED)
