"""An inode's extended attributes (kernel_model/fs/xattrs.py), as tmpfs keeps them."""
import pytest
from hypothesis import given, strategies as st

from kernel_model import errno as E
from kernel_model.creds import ROOT, Credentials
from kernel_model.errno import GuestErrno
from kernel_model.fs.constants import S_IFDIR, S_IFLNK, S_IFREG, S_ISVTX
from kernel_model.fs.permission import MAY_READ, MAY_WRITE, Access
from kernel_model.fs.records import StatResult
from kernel_model.fs.xattrs import XATTR_CREATE, XATTR_REPLACE, Xattrs, check_permission

NOBODY = Access(Credentials(uid=65534, euid=65534, suid=65534, fsuid=65534, gid=65534,
                            egid=65534, sgid=65534, fsgid=65534, effective=0, permitted=0))
ROOT_ACCESS = Access(ROOT)


def _stat(mode: int, uid: int = 0) -> StatResult:
    return StatResult(1, 2, mode, 1, uid, 0, 0, 0, 4096, 0, 0, 0, 0)


def errno_of(fn, *args):
    with pytest.raises(GuestErrno) as caught:
        fn(*args)
    return caught.value.errno


def test_create_replace_get_list_remove():
    x = Xattrs()
    x.set(b"user.a", b"1", XATTR_CREATE)
    assert errno_of(x.set, b"user.a", b"2", XATTR_CREATE) == E.EEXIST
    assert errno_of(x.set, b"user.b", b"2", XATTR_REPLACE) == E.ENODATA
    x.set(b"trusted.t", b"", 0)
    x.set(b"user.a", b"3", XATTR_REPLACE)
    assert x.get(b"user.a") == b"3" and x.get(b"trusted.t") == b""
    assert x.names(privileged=True) == b"user.a\0trusted.t\0"
    assert x.names(privileged=False) == b"user.a\0"
    x.remove(b"user.a")
    assert errno_of(x.get, b"user.a") == E.ENODATA and errno_of(x.remove, b"user.a") == E.ENODATA


def test_names_outside_the_stored_namespaces():
    x = Xattrs()
    assert errno_of(x.set, b"system.posix_acl_access", b"", 0) == E.EOPNOTSUPP
    assert errno_of(x.get, b"foo.bar") == E.EOPNOTSUPP
    assert errno_of(x.set, b"user.", b"v", 0) == E.EINVAL


def test_who_may_use_which_namespace():
    reg, link = _stat(S_IFREG | 0o644), _stat(S_IFLNK | 0o777)
    check_permission(ROOT_ACCESS, reg, b"trusted.x", MAY_WRITE)
    assert errno_of(check_permission, NOBODY, reg, b"trusted.x", MAY_WRITE) == E.EPERM
    assert errno_of(check_permission, NOBODY, reg, b"trusted.x", MAY_READ) == E.ENODATA
    assert errno_of(check_permission, ROOT_ACCESS, link, b"user.x", MAY_WRITE) == E.EPERM
    assert errno_of(check_permission, ROOT_ACCESS, link, b"user.x", MAY_READ) == E.ENODATA
    check_permission(ROOT_ACCESS, link, b"security.x", MAY_WRITE)
    assert errno_of(check_permission, NOBODY, reg, b"user.x", MAY_WRITE) == E.EACCES
    check_permission(NOBODY, reg, b"user.x", MAY_READ)
    sticky = _stat(S_IFDIR | 0o777 | S_ISVTX)
    assert errno_of(check_permission, NOBODY, sticky, b"user.x", MAY_WRITE) == E.EPERM


NAMES = st.sampled_from([b"user.a", b"user.b", b"trusted.c", b"security.d"])


@given(st.lists(st.tuples(st.sampled_from(["set", "remove"]), NAMES, st.binary(max_size=4),
                          st.sampled_from([0, XATTR_CREATE, XATTR_REPLACE])), max_size=25))
def test_the_store_is_a_dict_with_create_and_replace(ops):
    x, model = Xattrs(), {}
    for op, name, value, flags in ops:
        if op == "set":
            refused = (flags == XATTR_CREATE and name in model) or (
                flags == XATTR_REPLACE and name not in model)
            if refused:
                assert errno_of(x.set, name, value, flags) in (E.EEXIST, E.ENODATA)
            else:
                x.set(name, value, flags)
                model.setdefault(name, value)
                model[name] = value
        elif name in model:
            x.remove(name)
            del model[name]
        else:
            assert errno_of(x.remove, name) == E.ENODATA
    assert x.names(privileged=True) == b"".join(n + b"\0" for n in model)
    assert all(x.get(n) == v for n, v in model.items())
