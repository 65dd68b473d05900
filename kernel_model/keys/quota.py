"""Key quotas per user and /proc/key-users (security/keys/key.c, keyring.c, proc.c).

Each user may own at most maxkeys keys and maxbytes bytes of them: 200 keys and 20 000 bytes,
root 1 000 000 and 25 000 000 (key_quota_maxkeys...); root may change the four limits through
/proc/sys/kernel/keys/ (security/keys/sysctl.c: proc_dointvec_minmax from 1 to INT_MAX), and
the table keeps them (KeyTable.quota_limits).
A key costs its description and its NUL (key_alloc's quotalen, def_datalen being 0 for the
modeled types) plus its payload (key_payload_reserve at instantiation or update); a keyring's
payload is KEYQUOTA_LINK_BYTES (4) per key it links, charged to the keyring's owner by
__key_link_begin unless the link replaces one in place. Going past a limit is EDQUOT; the
keyrings the kernel makes for a task (thread, process, session, user) are charged without a
check (KEY_ALLOC_QUOTA_OVERRUN). The usage is read off the key table, so it always is what
the live keys cost.
"""
from .. import errno as E
from ..errno import GuestErrno

KEYQUOTA_LINK_BYTES = 4
DEFAULT_LIMITS = {"root_maxkeys": 1_000_000, "root_maxbytes": 25_000_000, "maxkeys": 200,
                  "maxbytes": 20_000}


def cost(key) -> int:
    data = KEYQUOTA_LINK_BYTES * len(key.links) if key.is_keyring else len(key.payload)
    return len(key.description) + 1 + data


def usage(table, uid: int) -> tuple[int, int]:
    keys = [k for k in table.keys.values() if k.uid == uid]
    return len(keys), sum(cost(k) for k in keys)


def limits(table, uid: int) -> tuple[int, int]:
    """(keys, bytes) `uid` may own: root's or everybody else's."""
    prefix = "root_" if uid == 0 else ""
    return table.quota_limits[prefix + "maxkeys"], table.quota_limits[prefix + "maxbytes"]


def check_bytes(table, uid: int, more: int) -> None:
    """key_payload_reserve: `more` bytes more for `uid`, or EDQUOT."""
    if more > 0 and usage(table, uid)[1] + more > limits(table, uid)[1]:
        raise GuestErrno(E.EDQUOT)


def check_new_key(table, uid: int, description: bytes, datalen: int) -> None:
    """key_alloc's check (one key more, its description) then its payload's reservation."""
    keys, used = usage(table, uid)
    max_keys, max_bytes = limits(table, uid)
    if keys + 1 > max_keys or used + len(description) + 1 > max_bytes:
        raise GuestErrno(E.EDQUOT)
    check_bytes(table, uid, len(description) + 1 + datalen)


def check_link(table, keyring, key) -> None:
    """__key_link_begin: a link that does not replace one in place costs its keyring's owner."""
    for serial in keyring.links:
        other = table.keys.get(serial)
        if serial == key.serial or other is not None and \
                (other.type, other.description) == (key.type, key.description):
            return
    check_bytes(table, keyring.uid, KEYQUOTA_LINK_BYTES)


def key_users_text(table) -> bytes:
    """/proc/key-users (proc_key_users_show): uid, usage, nkeys/nikeys, qnkeys/maxkeys,
    qnbytes/maxbytes, for every user owning a key; the usage is counted as the keys."""
    lines = []
    for uid in sorted({k.uid for k in table.keys.values()}):
        keys, used = usage(table, uid)
        live = sum(1 for k in table.keys.values() if k.uid == uid and not k.revoked)
        max_keys, max_bytes = limits(table, uid)
        lines.append(b"%5u: %5d %d/%d %d/%d %d/%d\n" % (uid, keys, keys, live, keys, max_keys,
                                                       used, max_bytes))
    return b"".join(lines)
