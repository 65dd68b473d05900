"""add_key, request_key and keyctl (security/keys/keyctl.c, request_key.c) over the run's
KeyTable (kernel_model/keys/).

Arguments are taken in Linux's order, so a call with several faults fails as Linux's does: the
type name (EFAULT; empty or 32 bytes and more EINVAL; a name starting with "." is EPERM), the
description (up to 4096 bytes), the payload (up to 1 MiB - 1 for add_key, a page for
KEYCTL_UPDATE), then the keyring, then the type itself (ENODEV for a type the model does not
have). request_key finds a key in the caller's keyrings; one it would have to construct is
made negative, as on a system without /sbin/request-key (keys/construct.py).
keyctl's operations not modeled answer EOPNOTSUPP, as Linux does for an unknown one.
"""
import struct

from ... import errno as E
from ...creds import CAP_SYS_ADMIN
from ...errno import GuestErrno
from ...keys import quota
from ...keys.construct import construct
from ...keys.key import LINK, PERM_MASK, READ, SEARCH, SETATTR, WRITE
from ...keys.key_types import key_type
from ...keys.lookup import Caller, check_valid, join_session, lookup, own_keyrings
from ...keys.table import KeyTable
from ..kinds import K
from ..registry import syscall

KEY_TYPE_MAX = 32                  # key_get_type_from_user's buffer
KEY_DESC_MAX = 4096                # KEY_MAX_DESC_SIZE
ADD_KEY_PAYLOAD_MAX = 1024 * 1024 - 1
UPDATE_PAYLOAD_MAX = 4096          # keyctl_update_key: PAGE_SIZE
NS = 1_000_000_000

(GET_KEYRING_ID, JOIN_SESSION_KEYRING, UPDATE, REVOKE, CHOWN, SETPERM, DESCRIBE, CLEAR, LINK_OP,
 UNLINK, SEARCH_OP, READ_OP, INSTANTIATE, NEGATE, SET_REQKEY_KEYRING, SET_TIMEOUT) = range(16)
INVALIDATE = 21
REQKEY_DEFL_MAX = 7                # KEY_REQKEY_DEFL_REQUESTOR_KEYRING


def _table(ctx) -> KeyTable:
    return ctx.kernel.keys


def _caller(ctx) -> Caller:
    proc = ctx.proc

    def set_creds(creds):
        proc.creds = creds
    groups = proc.groups
    return Caller(ctx.thread.tid, proc.pid, proc.creds,
                  lambda gid: gid == proc.creds.fsgid or gid in groups, set_creds,
                  ctx.kernel.clock.realtime_ns())


def _type_name(ctx, addr: int) -> str:
    """key_get_type_from_user()."""
    try:
        name = ctx.read_cstr(addr, KEY_TYPE_MAX - 1)
    except GuestErrno as e:
        raise GuestErrno(E.EINVAL if e.errno == E.ENAMETOOLONG else e.errno) from None
    if not name:
        raise GuestErrno(E.EINVAL)
    if name.startswith(b"."):
        raise GuestErrno(E.EPERM)
    return name.decode("latin-1")


def _string(ctx, addr: int) -> bytes:
    """strndup_user(.., KEY_MAX_DESC_SIZE): EFAULT, or EINVAL when too long."""
    try:
        return ctx.read_cstr(addr, KEY_DESC_MAX - 1)
    except GuestErrno as e:
        raise GuestErrno(E.EINVAL if e.errno == E.ENAMETOOLONG else e.errno) from None


def _payload(ctx, addr: int, length: int, limit: int) -> bytes | None:
    if length > limit:
        raise GuestErrno(E.EINVAL)
    return ctx.read(addr, length) if length else (None if not addr else b"")


@syscall("add_key", args=(("type", K.PATH), ("description", K.PATH), ("payload", K.BUF_IN),
                          ("plen", K.ULONG), ("keyring", K.INT)))
def sys_add_key(ctx, type_addr, desc_addr, payload_addr, plen, ringid):
    if plen > ADD_KEY_PAYLOAD_MAX:
        raise GuestErrno(E.EINVAL)
    type_name = _type_name(ctx, type_addr)
    description = _string(ctx, desc_addr) if desc_addr else None
    if description == b"":
        description = None
    elif description is not None and description.startswith(b".") and type_name == "keyring":
        raise GuestErrno(E.EPERM)
    payload = _payload(ctx, payload_addr, plen, ADD_KEY_PAYLOAD_MAX)
    table, caller = _table(ctx), _caller(ctx)
    keyring, _ = lookup(table, caller, ctx.int32(ringid), create=True, need=WRITE)
    ktype = key_type(type_name)
    if not keyring.is_keyring:
        raise GuestErrno(E.ENOTDIR)
    data = ktype.preparse(description, payload)
    if description is None:
        raise GuestErrno(E.EINVAL)
    for serial in keyring.links:                  # key_create_or_update: update in place
        old = table.keys.get(serial)
        if (old is not None and ktype.updatable and old.type == type_name
                and old.description == description and not old.revoked):
            lookup(table, caller, old.serial, need=WRITE)
            quota.check_bytes(table, old.uid, len(data) - len(old.payload))
            old.payload = data
            return old.serial
    creds = caller.creds
    link_cost = 0 if any(_same_index(table.keys.get(s), type_name, description)
                         for s in keyring.links) else quota.KEYQUOTA_LINK_BYTES
    quota.check_bytes(table, keyring.uid, link_cost)       # __key_link_begin first
    quota.check_new_key(table, creds.fsuid, description,
                        len(data) + (link_cost if keyring.uid == creds.fsuid else 0))
    key = table.new(type_name, description, creds.fsuid, creds.fsgid, ktype.default_perm(), data)
    table.link(keyring, key)
    return key.serial


def _same_index(key, type_name: str, description: bytes) -> bool:
    """A key a new one of this type and description replaces in its keyring (no new link)."""
    return key is not None and (key.type, key.description) == (type_name, description)


@syscall("request_key", args=(("type", K.PATH), ("description", K.PATH),
                              ("callout_info", K.PATH), ("dest_keyring", K.INT)))
def sys_request_key(ctx, type_addr, desc_addr, callout_addr, dest):
    type_name = _type_name(ctx, type_addr)
    description = _string(ctx, desc_addr)
    if not description:
        raise GuestErrno(E.EINVAL)
    if callout_addr:
        _string(ctx, callout_addr)
    table, caller = _table(ctx), _caller(ctx)
    destination = None
    if ctx.int32(dest):
        destination = lookup(table, caller, ctx.int32(dest), create=True, need=WRITE)[0]
    ktype = key_type(type_name)
    found = _search(table, caller, own_keyrings(table, caller), type_name, description)
    if found is None:
        if not callout_addr:
            raise GuestErrno(E.ENOKEY)
        construct(table, caller, ktype, description, destination, caller.now_ns)
    if destination is not None:
        table.link(destination, found)
    return found.serial


def _search(table, caller, roots, type_name: str, description: bytes):
    """keyring_search_rcu(): the first key of that type and description the caller may see,
    through keyrings it may search; an invalid one found is its error."""
    starts = {root.serial for root in roots}
    for key in table.reachable(roots):
        if key.type == type_name and key.description == description and key.serial not in starts:
            check_valid(key, caller.now_ns)
            if key.negative_errno:
                raise GuestErrno(key.negative_errno)      # a negative key found: its state
            return key
    return None


@syscall("keyctl", args=(("operation", K.INT), ("arg2", K.ULONG), ("arg3", K.ULONG),
                         ("arg4", K.ULONG), ("arg5", K.ULONG)))
def sys_keyctl(ctx, op, arg2, arg3, arg4, arg5):
    handler = _OPERATIONS.get(ctx.int32(op))
    if handler is None:
        raise GuestErrno(E.EOPNOTSUPP)
    return handler(ctx, _table(ctx), _caller(ctx), arg2, arg3, arg4, arg5)


def _get_keyring_id(ctx, table, caller, key_id, create, *_):
    return lookup(table, caller, ctx.int32(key_id), create=bool(create), need=SEARCH)[0].serial


def _join_session(ctx, table, caller, name_addr, *_):
    name = _string(ctx, name_addr) if name_addr else None
    if name is not None and name.startswith(b"."):
        raise GuestErrno(E.EPERM)
    return join_session(table, caller, name).serial


def _update(ctx, table, caller, key_id, payload_addr, plen, *_):
    payload = _payload(ctx, payload_addr, plen, UPDATE_PAYLOAD_MAX)
    key, _ = lookup(table, caller, ctx.int32(key_id), need=WRITE)
    ktype = key_type(key.type)
    if not ktype.updatable:
        raise GuestErrno(E.EOPNOTSUPP)
    data = ktype.preparse(key.description, payload)
    quota.check_bytes(table, key.uid, len(data) - len(key.payload))
    key.payload = data
    return 0


def _revoke(ctx, table, caller, key_id, *_):
    try:
        key, _ = lookup(table, caller, ctx.int32(key_id), need=WRITE, partial=True)
    except GuestErrno as e:
        if e.errno != E.EACCES:
            raise
        key, _ = lookup(table, caller, ctx.int32(key_id), need=SETATTR, partial=True)
    key.revoked = True
    return 0


def _setperm(ctx, table, caller, key_id, perm, *_):
    if perm & ~PERM_MASK & 0xFFFFFFFF:
        raise GuestErrno(E.EINVAL)
    key, _ = lookup(table, caller, ctx.int32(key_id), create=True, partial=True)
    if key.uid != caller.fsuid and not caller.creds.capable(CAP_SYS_ADMIN):
        raise GuestErrno(E.EACCES)
    key.perm = perm & 0xFFFFFFFF
    return 0


def _describe(ctx, table, caller, key_id, buf, buflen, *_):
    key, _ = lookup(table, caller, ctx.int32(key_id), need=0x01, partial=True)
    text = key.describe() + b"\0"
    if buf and buflen >= len(text):
        ctx.write(buf, text)
    return len(text)


def _clear(ctx, table, caller, key_id, *_):
    keyring, _ = lookup(table, caller, ctx.int32(key_id), create=True, need=WRITE)
    if not keyring.is_keyring:
        raise GuestErrno(E.ENOTDIR)
    keyring.links.clear()
    return 0


def _link(ctx, table, caller, key_id, ring_id, *_):
    keyring, _ = lookup(table, caller, ctx.int32(ring_id), create=True, need=WRITE)
    key, _ = lookup(table, caller, ctx.int32(key_id), create=True, need=LINK)
    if keyring.is_keyring:
        quota.check_link(table, keyring, key)
    table.link(keyring, key)
    return 0


def _unlink(ctx, table, caller, key_id, ring_id, *_):
    keyring, _ = lookup(table, caller, ctx.int32(ring_id), need=WRITE)
    key, _ = lookup(table, caller, ctx.int32(key_id), partial=True)
    if not keyring.is_keyring:
        raise GuestErrno(E.ENOTDIR)
    if key.serial not in keyring.links:
        raise GuestErrno(E.ENOENT)
    keyring.links.remove(key.serial)
    return 0


def _search_op(ctx, table, caller, ring_id, type_addr, desc_addr, dest_id, *_):
    type_name = _type_name(ctx, type_addr)
    description = _string(ctx, desc_addr)
    keyring, _ = lookup(table, caller, ctx.int32(ring_id), need=SEARCH)
    destination = None
    if ctx.int32(dest_id):
        destination = lookup(table, caller, ctx.int32(dest_id), create=True, need=WRITE)[0]
    key_type(type_name)
    if not keyring.is_keyring:
        raise GuestErrno(E.ENOTDIR)
    found = _search(table, caller, [keyring], type_name, description)
    if found is None:
        raise GuestErrno(E.ENOKEY)
    if destination is not None:
        table.link(destination, found)
    return found.serial


def _read(ctx, table, caller, key_id, buf, buflen, *_):
    key, held = lookup(table, caller, ctx.int32(key_id))
    rights = key.rights(caller.fsuid, caller.in_group, held)
    if not rights & READ and not (held and rights & SEARCH):
        raise GuestErrno(E.EACCES)
    if not key_type(key.type).readable:
        raise GuestErrno(E.EOPNOTSUPP)
    if key.negative_errno:
        raise GuestErrno(key.negative_errno)              # keyctl_read_key: key_read_state
    data = b"".join(struct.pack("<i", s) for s in key.links) if key.is_keyring else key.payload
    if buf and buflen:
        ctx.write(buf, data[:buflen])
    return len(data)


def _set_reqkey_keyring(ctx, table, caller, default, *_):
    default = ctx.int32(default)
    old = table.reqkey_defaults.get(caller.tgid, 0)
    if default == -1:                 # KEY_REQKEY_DEFL_NO_CHANGE
        return old
    if not 0 <= default <= REQKEY_DEFL_MAX:
        raise GuestErrno(E.EINVAL)
    table.reqkey_defaults[caller.tgid] = default
    return old


def _set_timeout(ctx, table, caller, key_id, timeout, *_):
    key, _ = lookup(table, caller, ctx.int32(key_id), create=True, need=SETATTR, partial=True)
    timeout &= 0xFFFFFFFF
    key.expiry_ns = caller.now_ns + timeout * NS if timeout else None
    return 0


def _invalidate(ctx, table, caller, key_id, *_):
    key, _ = lookup(table, caller, ctx.int32(key_id), need=SEARCH)
    for keyring in table.keys.values():
        if key.serial in keyring.links:
            keyring.links.remove(key.serial)
    del table.keys[key.serial]
    return 0


_OPERATIONS = {GET_KEYRING_ID: _get_keyring_id, JOIN_SESSION_KEYRING: _join_session,
               UPDATE: _update, REVOKE: _revoke, SETPERM: _setperm, DESCRIBE: _describe,
               CLEAR: _clear, LINK_OP: _link, UNLINK: _unlink, SEARCH_OP: _search_op,
               READ_OP: _read, SET_REQKEY_KEYRING: _set_reqkey_keyring,
               SET_TIMEOUT: _set_timeout, INVALIDATE: _invalidate}
