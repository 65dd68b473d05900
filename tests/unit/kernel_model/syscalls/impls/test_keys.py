"""add_key, request_key and keyctl (kernel_model/keys/, syscalls/impls/keys.py): ENOSYS before
(LTP add_key02, keyctl01, keyctl05, request_key01 and request_key05 TCONF'd on it)."""
import struct

from kernel_model import errno as E
from tests.unit.kernel_model.call_script import run_script

THREAD, PROCESS, SESSION, USER, USER_SESSION = -1, -2, -3, -4, -5
GET_KEYRING_ID, JOIN_SESSION, UPDATE, REVOKE, SETPERM, DESCRIBE = 0, 1, 2, 3, 5, 6
UNLINK, READ = 9, 11
POS_ALL, POS_WRITE = 0x3F000000, 0x04000000
# BUF: "user\0" at 0, "desc\0" at 8, "payload" at 16, "keyring\0" at 32, "ltp\0" at 48,
# "nosuchtype\0" at 56, ".hidden\0" at 72
STRINGS = (b"user\0\0\0\0desc\0\0\0\0payload\0" + bytes(8) + b"keyring\0" + bytes(8)
           + b"ltp\0\0\0\0\0nosuchtype\0" + bytes(5) + b".hidden\0")


def test_a_user_key_is_added_read_described_and_revoked(arch):
    results, buf, _ = run_script(arch, [
        ("add_key", "BUF", "BUF+8", "BUF+16", 7, SESSION),
        ("keyctl", READ, "@0", "BUF+512", 100),
        ("keyctl", DESCRIBE, "@0", "BUF+768", 200),
        ("keyctl", READ, SESSION, "BUF+1024", 64),
        ("keyctl", REVOKE, "@0"),
        ("keyctl", READ, "@0", "BUF+512", 100),
        ("keyctl", UNLINK, "@0", SESSION),
        ("keyctl", REVOKE, 0x7FFFFFFF),
    ], data=STRINGS)
    serial = results[0]
    assert serial > 0 and results[1] == 7 and buf[512:519] == b"payload"
    assert buf[768:768 + results[2]] == b"user;0;0;3f010000;desc\0"
    assert results[3] == 4 and struct.unpack_from("<i", buf, 1024)[0] == serial
    assert results[4:] == [0, -E.EKEYREVOKED, 0, -E.ENOKEY]


def test_arguments_are_checked_in_linux_order(arch):
    results, _, _ = run_script(arch, [
        ("add_key", "BUF", "BUF+8", 0, 7, SESSION),            # payload unreadable: EFAULT
        ("add_key", "BUF+56", "BUF+8", 0, 7, SESSION),         # ...before the type: EFAULT
        ("add_key", "BUF+56", "BUF+8", "BUF+16", 7, SESSION),  # no such type
        ("add_key", "BUF+72", "BUF+8", "BUF+16", 7, SESSION),  # "." types are the kernel's
        ("add_key", "BUF+32", "BUF+72", 0, 0, SESSION),        # so are "." keyrings
        ("add_key", "BUF", "BUF+8", "BUF+16", 0, SESSION),     # a user key needs a payload
        ("add_key", "BUF", "BUF+8", "BUF+16", 7, -6),          # the group keyring: EINVAL
        ("keyctl", 99),
        ("keyctl", GET_KEYRING_ID, PROCESS, 0),                # not made without create
        ("keyctl", GET_KEYRING_ID, PROCESS, 1),
    ], data=STRINGS)
    assert results[:9] == [-E.EFAULT, -E.EFAULT, -E.ENODEV, -E.EPERM, -E.EPERM, -E.EINVAL,
                           -E.EINVAL, -E.EOPNOTSUPP, -E.ENOKEY]
    assert results[9] > 0


def test_request_key_finds_a_keyring_in_the_thread_keyring(arch):
    """LTP request_key01: a keyring "ltp" added to the thread keyring is what request_key
    returns; another description is ENOKEY."""
    results, _, _ = run_script(arch, [
        ("add_key", "BUF+32", "BUF+48", 0, 0, THREAD),
        ("request_key", "BUF+32", "BUF+48", 0, 0),
        ("request_key", "BUF+32", "BUF+8", 0, 0),
    ], data=STRINGS)
    assert results[0] > 0 and results[1] == results[0] and results[2] == -E.ENOKEY


def test_update_needs_write_permission_and_a_type_that_updates(arch):
    """LTP keyctl05: with the possessor's write right taken away, KEYCTL_UPDATE is EACCES; a
    keyring has no update (EOPNOTSUPP) even with every right."""
    results, buf, _ = run_script(arch, [
        ("keyctl", JOIN_SESSION, 0),
        ("add_key", "BUF", "BUF+8", "BUF+16", 7, SESSION),
        ("keyctl", UPDATE, "@1", "BUF+8", 4),
        ("keyctl", READ, "@1", "BUF+512", 100),
        ("keyctl", SETPERM, "@1", POS_ALL & ~POS_WRITE),
        ("keyctl", UPDATE, "@1", "BUF+16", 7),
        ("keyctl", SETPERM, "@0", POS_ALL),
        ("keyctl", UPDATE, "@0", "BUF+16", 7),
        ("keyctl", SETPERM, "@1", 0x40000000),                 # bits no key has: EINVAL
    ], data=STRINGS)
    assert results[0] > 0 and results[1] > 0 and results[2] == 0
    assert results[3] == 4 and buf[512:516] == b"desc"
    assert results[4:] == [0, -E.EACCES, 0, -E.EOPNOTSUPP, -E.EINVAL]


def test_a_keyring_named_after_another_user_is_not_that_users_keyring(arch):
    """LTP add_key03 (Linux 237bbd29f7a0): root's keyrings "_uid.1" and "_uid_ses.1" do not
    become uid 1's user and user session keyrings after setuid(1). (LTP's test itself dies
    natively, before this point, where the host's nsswitch.conf names systemd: its static
    getpwuid dlopens libnss_systemd, which faults in _nss_systemd_is_blocked; the sandbox
    faults at the same instruction.)"""
    uid_names = b"keyring\0_uid.1\0\0_uid_ses.1\0"          # at 0, 8 and 16
    results, _, _ = run_script(arch, [
        ("getuid",),
        ("add_key", "BUF", "BUF+8", 0, 0, PROCESS),
        ("add_key", "BUF", "BUF+16", 0, 0, PROCESS),
        ("setuid", 1),
        ("keyctl", GET_KEYRING_ID, USER, 1),
        ("keyctl", GET_KEYRING_ID, USER_SESSION, 1),
    ], data=uid_names)
    assert results[0] == 0 and results[1] > 0 and results[2] > 0 and results[3] == 0
    assert results[4] > 0 and results[5] > 0
    assert {results[4], results[5]}.isdisjoint({results[1], results[2]})
