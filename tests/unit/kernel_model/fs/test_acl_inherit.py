"""A new inode under a directory's default ACL (kernel_model/fs/acl_inherit.py, Linux's
posix_acl_create and posix_acl_create_masq): its mode and ACLs, or the umask without one."""
from types import SimpleNamespace

from hypothesis import given, strategies as st

from kernel_model.fs.acl_inherit import create_masq, creation_mode, give_acls
from kernel_model.fs.posix_acl import (ACCESS, ACL_GROUP_OBJ, ACL_MASK, ACL_OTHER, ACL_USER,
                                       ACL_USER_OBJ, DEFAULT, check_valid, equiv_mode)
from kernel_model.fs.xattrs import Xattrs
from tests.unit.kernel_model.fs.test_posix_acl import NONE, valid_acls

NAMED = ((ACL_USER_OBJ, 7, NONE), (ACL_USER, 5, 1000), (ACL_GROUP_OBJ, 7, NONE),
         (ACL_MASK, 5, NONE), (ACL_OTHER, 1, NONE))
MINIMAL = ((ACL_USER_OBJ, 7, NONE), (ACL_GROUP_OBJ, 7, NONE), (ACL_OTHER, 7, NONE))


def _dir(default=None, keeps_acls=True):
    store = Xattrs()
    store.keeps_acls = keeps_acls
    if default is not None:
        store.set_acl(DEFAULT, default)
    return SimpleNamespace(xattrs=store)


def test_without_a_default_acl_the_umask_applies():
    assert creation_mode(_dir(), 0o666, 0o022, False) == (0o644, ())
    assert creation_mode(SimpleNamespace(xattrs=None), 0o777, 0o077, True) == (0o700, ())
    assert creation_mode(_dir(NAMED, keeps_acls=False), 0o666, 0o022, False) == (0o644, ())


def test_a_default_acl_replaces_the_umask_as_measured_on_linux():
    # the values the native runs of tests/e2e/run/test_default_acls.py print (Linux 6.18)
    mode, acls = creation_mode(_dir(NAMED), 0o666, 0o022, False)
    assert mode == 0o640
    assert acls == ((ACCESS, ((ACL_USER_OBJ, 6, NONE), (ACL_USER, 5, 1000), (ACL_GROUP_OBJ, 7, NONE),
                              (ACL_MASK, 4, NONE), (ACL_OTHER, 0, NONE))),)
    mode, acls = creation_mode(_dir(NAMED), 0o40777, 0o022, True)
    assert mode == 0o40751 and acls == ((DEFAULT, NAMED), (ACCESS, NAMED))
    assert creation_mode(_dir(MINIMAL), 0o666, 0o022, False) == (0o666, ())
    assert creation_mode(_dir(MINIMAL), 0o777, 0o022, True) == (0o777, ((DEFAULT, MINIMAL),))
    assert creation_mode(_dir(NAMED), 0o104755, 0o022, False)[0] == 0o104751
    assert creation_mode(_dir(NAMED), None, 0o022, False) == (None, ())      # a symlink


def test_give_acls_stores_them_on_a_node_that_keeps_acls():
    node = _dir()
    give_acls(node, ((DEFAULT, NAMED), (ACCESS, MINIMAL)))
    assert node.xattrs.acl(DEFAULT) == NAMED and node.xattrs.acl(ACCESS) == MINIMAL
    give_acls(SimpleNamespace(xattrs=None), ((ACCESS, NAMED),))          # /proc: nothing to do


@given(valid_acls(), st.integers(0, 0o7777))
def test_the_new_inode_s_mode_is_what_its_access_acl_says(default, mode):
    """Invariants of posix_acl_create_masq: the inherited ACL is valid, grants no more than the
    default ACL or the mode asked, the mode's rwx bits are what it stands for (the mask for the
    group class), the bits beyond rwx are the mode's, and it says more than the mode exactly
    when the default ACL has a mask or a named entry."""
    access, new_mode, more = create_masq(default, mode)
    check_valid(access)
    assert all(new & old == new for (_t, new, _i), (_u, old, _j) in zip(access, default))
    assert new_mode & ~mode == 0 and new_mode & ~0o777 == mode & ~0o777
    assert equiv_mode(access, mode) == (new_mode, more)
    assert more == any(tag not in (ACL_USER_OBJ, ACL_GROUP_OBJ, ACL_OTHER) for tag, _p, _i in default)
