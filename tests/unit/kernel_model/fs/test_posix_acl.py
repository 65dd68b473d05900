"""POSIX ACL blobs (kernel_model/fs/posix_acl.py) as fs/posix_acl.c reads, checks and writes
them, and the mode an access ACL stands for."""
import struct

import pytest
from hypothesis import example, given, strategies as st

from kernel_model import errno as E
from kernel_model.errno import GuestErrno
from kernel_model.fs.posix_acl import (ACL_GROUP, ACL_GROUP_OBJ, ACL_MASK, ACL_OTHER, ACL_USER,
                                       ACL_USER_OBJ, check_valid, chmod_entries, equiv_mode,
                                       from_xattr, to_xattr)
from kernel_model.fs.xattrs import Xattrs

NONE = 0xFFFFFFFF


def blob(entries, version=2) -> bytes:
    return struct.pack("<I", version) + b"".join(struct.pack("<HHI", *e) for e in entries)


def errno_of(fn, *args):
    with pytest.raises(GuestErrno) as caught:
        fn(*args)
    return caught.value.errno


def test_malformed_blobs():
    minimal = [(ACL_USER_OBJ, 7, NONE), (ACL_GROUP_OBJ, 5, NONE), (ACL_OTHER, 0, NONE)]
    assert errno_of(from_xattr, b"\2\0") == E.EINVAL
    assert errno_of(from_xattr, blob(minimal, version=1)) == E.EOPNOTSUPP
    assert errno_of(from_xattr, blob(minimal)[:-1]) == E.EINVAL
    assert errno_of(from_xattr, blob([(0x40, 0, 0)])) == E.EINVAL
    assert errno_of(from_xattr, blob([(ACL_USER, 4, NONE)])) == E.EINVAL
    assert from_xattr(blob([])) is None                        # a header alone: no ACL


def test_entries_out_of_order_or_without_a_needed_mask():
    def valid(*entries):
        try:
            check_valid(tuple(entries))
            return True
        except GuestErrno as e:
            assert e.errno == E.EINVAL
            return False
    u, g, o = (ACL_USER_OBJ, 6, NONE), (ACL_GROUP_OBJ, 4, NONE), (ACL_OTHER, 0, NONE)
    named, mask = (ACL_USER, 4, 1000), (ACL_MASK, 4, NONE)
    assert valid(u, g, o) and valid(u, named, g, mask, o) and valid(u, g, mask, o)
    assert not valid(g, u, o) and not valid(u, named, g, o) and not valid(u, g)
    assert not valid(u, u, g, o) and not valid(u, g, (ACL_GROUP, 4, 5), o)
    assert not valid((ACL_USER_OBJ, 8, NONE), g, o)


def test_the_ids_of_unnamed_entries_are_written_back_undefined():
    entries = from_xattr(blob([(ACL_USER_OBJ, 6, 0), (ACL_GROUP, 4, 7), (ACL_GROUP_OBJ, 4, 3),
                               (ACL_MASK, 4, 0), (ACL_OTHER, 0, 9)]))
    assert to_xattr(entries) == blob([(ACL_USER_OBJ, 6, NONE), (ACL_GROUP, 4, 7),
                                      (ACL_GROUP_OBJ, 4, NONE), (ACL_MASK, 4, NONE),
                                      (ACL_OTHER, 0, NONE)])


def test_listed_acls_come_first_on_tmpfs_in_set_order_on_ext4():
    for acls_first, expected in ((True, b"system.posix_acl_access\0system.posix_acl_default\0"
                                        b"user.a\0"),
                                 (False, b"user.a\0system.posix_acl_default\0"
                                         b"system.posix_acl_access\0")):
        x = Xattrs(acls_first=acls_first)
        x.set(b"user.a", b"1", 0)
        x.set_acl(b"system.posix_acl_default", ((ACL_USER_OBJ, 7, NONE),))
        x.set_acl(b"system.posix_acl_access", ((ACL_USER_OBJ, 7, NONE),))
        assert x.names(privileged=False) == expected
        x.set_acl(b"system.posix_acl_default", None)
        assert b"default" not in x.names(privileged=False)


perm = st.integers(0, 7)


@st.composite
def valid_acls(draw):
    users = sorted(draw(st.sets(st.integers(0, 70000), max_size=3)))
    groups = sorted(draw(st.sets(st.integers(0, 70000), max_size=3)))
    named = bool(users or groups)
    entries = [(ACL_USER_OBJ, draw(perm), NONE)] + [(ACL_USER, draw(perm), u) for u in users]
    entries += [(ACL_GROUP_OBJ, draw(perm), NONE)] + [(ACL_GROUP, draw(perm), g) for g in groups]
    if named or draw(st.booleans()):
        entries.append((ACL_MASK, draw(perm), NONE))
    return tuple(entries + [(ACL_OTHER, draw(perm), NONE)])


@given(valid_acls(), st.integers(0, 0o7777))
@example(((ACL_USER_OBJ, 6, NONE), (ACL_USER, 4, 1000), (ACL_GROUP_OBJ, 4, NONE),
          (ACL_MASK, 4, NONE), (ACL_OTHER, 0, NONE)), 0o2751)
def test_a_valid_acl_reads_back_and_follows_a_chmod(entries, mode):
    """Invariants: a valid ACL is read back as it was written; after a chmod the mode it stands
    for is the chmod's (the mask standing for the group class), and it is as extended as before."""
    check_valid(entries)
    assert from_xattr(to_xattr(entries)) == entries
    changed = chmod_entries(entries, mode)
    check_valid(changed)
    new_mode, more = equiv_mode(changed, 0o170000)
    assert new_mode == 0o170000 | (mode & 0o777)
    assert more == equiv_mode(entries, 0)[1] == any(e[0] == ACL_MASK for e in entries)


def _access(uid: int, gid: int, groups=()):
    from kernel_model.creds import Credentials
    from kernel_model.fs.permission import Access
    return Access(Credentials(uid=uid, euid=uid, suid=uid, fsuid=uid, gid=gid, egid=gid,
                              sgid=gid, fsgid=gid, effective=0, permitted=0), tuple(groups))


def _stat(mode: int):
    from kernel_model.fs.records import StatResult
    return StatResult(1, 2, 0o100000 | mode, 1, 0, 0, 0, 0, 4096, 0, 0, 0, 0)


def test_who_an_acl_lets_in():
    from kernel_model.fs.posix_acl import permission
    acl = ((ACL_USER_OBJ, 6, NONE), (ACL_USER, 6, 7), (ACL_USER, 0, 8), (ACL_GROUP_OBJ, 0, NONE),
           (ACL_GROUP, 4, 9), (ACL_MASK, 4, NONE), (ACL_OTHER, 4, NONE))
    st = _stat(0o644)
    assert permission(acl, _access(7, 100), st, 4) and not permission(acl, _access(7, 100), st, 2)
    assert not permission(acl, _access(8, 100), st, 4)           # named, with nothing
    assert permission(acl, _access(5, 9), st, 4)                 # a named group
    assert not permission(acl, _access(5, 0), st, 4)             # the file's group: no bits
    assert permission(acl, _access(5, 100), st, 4)               # nobody named: other


@given(st.integers(0, 0o777), st.integers(1, 7), st.booleans())
def test_an_acl_the_mode_says_all_of_lets_in_whom_the_mode_does(mode, want, in_group):
    """Invariant: for a caller that does not own the file, the three-entry ACL a mode stands
    for answers as the mode's group or other bits do."""
    from kernel_model.fs.posix_acl import permission
    acl = ((ACL_USER_OBJ, mode >> 6 & 7, NONE), (ACL_GROUP_OBJ, mode >> 3 & 7, NONE),
           (ACL_OTHER, mode & 7, NONE))
    caller = _access(1000, 0 if in_group else 1000)
    bits = (mode >> 3 if in_group else mode) & 7
    assert permission(acl, caller, _stat(mode), want) == (bits & want == want)
