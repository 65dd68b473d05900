"""struct fsxattr over the model's inode flags (kernel_model/fs/fsxattr.py): the XFS flags the
FS_*_FL flags stand for, and what ext4 and tmpfs take."""
import pytest
from hypothesis import given, strategies as st

from kernel_model import errno as E
from kernel_model.creds import ROOT
from kernel_model.errno import GuestErrno
from kernel_model.fs.constants import ROOTFS_DEV, S_IFDIR, S_IFREG
from kernel_model.fs.fsxattr import (FS_XFLAG_COMMON, FSXATTR, flags_of, from_user, fsgetxattr,
                                     fssetxattr, xflags_of)
from kernel_model.fs.inode_flags import FS_EXTENTS_FL, get_flags
from kernel_model.fs.records import Meta

SHM_DEV = ROOTFS_DEV + 1


def meta(dev: int, fmt: int = S_IFREG) -> Meta:
    return Meta(dev, 5, fmt | 0o644, 1, 0, 0, 0)


def set_x(m: Meta, xflags: int, extsize: int = 0, projid: int = 0) -> int:
    try:
        fssetxattr(m, from_user(FSXATTR.pack(xflags, extsize, 0, projid, 0)), ROOT, True)
        return 0
    except GuestErrno as e:
        return -e.errno


def test_ext4_keeps_its_other_flags_and_ignores_the_xfs_ones():
    m = meta(ROOTFS_DEV)
    assert set_x(m, 0x8 | 0x1 | 0x2000) == 0            # immutable; realtime, nodefrag ignored
    assert get_flags(m) == FS_EXTENTS_FL | 0x10
    assert FSXATTR.unpack(fsgetxattr(m))[0] == 0x8
    assert set_x(m, 0, projid=5) == -E.EOPNOTSUPP and get_flags(m) == FS_EXTENTS_FL


def test_tmpfs_refuses_what_is_not_a_common_flag():
    m = meta(SHM_DEV)
    assert set_x(m, 0x1) == set_x(m, 0x20) == set_x(m, 0, extsize=4096) == -E.EOPNOTSUPP
    assert set_x(m, 0x1000) == -E.EINVAL                 # an inherited hint on a file
    assert set_x(m, 0x800 | 0x80000000 | 0x2) == 0       # a hint of size 0, read-only flags
    assert set_x(meta(SHM_DEV, S_IFDIR), 0x800) == -E.EINVAL
    with pytest.raises(GuestErrno) as caught:
        from_user(FSXATTR.pack(0x20000, 0, 0, 0, 0))
    assert caught.value.errno == E.EOPNOTSUPP


@given(st.integers(0, 0xFFFFFFFF))
def test_the_common_flags_go_both_ways(xflags):
    """Invariant: an XFS flag with an FS_*_FL twin comes back from the twin, others do not."""
    assert xflags_of(flags_of(xflags)) == xflags & FS_XFLAG_COMMON


@given(st.sets(st.sampled_from([0x8, 0x10, 0x40, 0x80])))
def test_what_tmpfs_takes_it_reads_back(chosen):
    """Invariant: the immutable, append, noatime and nodump xflags set on tmpfs read back."""
    m = meta(SHM_DEV)
    assert set_x(m, sum(chosen)) == 0
    assert FSXATTR.unpack(fsgetxattr(m))[0] == sum(chosen)
