"""The inode flags' rules (kernel_model/fs/inode_flags.py): what tmpfs and the rootfs's ext4
take and refuse, who may set immutable and append-only, and what those refuse; the figures are
the native ones (Linux 6.18, as root, bit by bit, tests/e2e/run/test_inode_flags.py)."""
import pytest
from hypothesis import given, strategies as st

from kernel_model import errno as E
from kernel_model.creds import CAP_LINUX_IMMUTABLE, Credentials
from kernel_model.errno import GuestErrno
from kernel_model.fs.constants import O_APPEND, O_RDONLY, O_TRUNC, O_WRONLY, ROOTFS_DEV, S_IFDIR, S_IFREG
from kernel_model.fs.inode_flags import (EXT4, FS_APPEND_FL, FS_DIRSYNC_FL, FS_EXTENTS_FL,
                                         FS_IMMUTABLE_FL, FS_NODUMP_FL, SHMEM, check_open,
                                         check_unchangeable, get_flags, rules_of, set_flags)
from kernel_model.fs.records import new_meta
from kernel_model.fs.shmfs import SHM_DEV

ROOT = Credentials()
NO_IMMUTABLE = Credentials(effective=Credentials().effective & ~(1 << CAP_LINUX_IMMUTABLE))


def meta(dev=SHM_DEV, fmt=S_IFREG):
    return new_meta(dev, 5, fmt | 0o644, 0)


def errno_of(call) -> int:
    with pytest.raises(GuestErrno) as raised:
        call()
    return raised.value.errno


def test_a_new_file_shows_its_file_systems_initial_flags():
    assert get_flags(meta()) == 0
    assert get_flags(meta(ROOTFS_DEV)) == FS_EXTENTS_FL


def test_tmpfs_refuses_what_it_does_not_keep_and_ext4_ignores_what_it_shows_only():
    assert errno_of(lambda: set_flags(meta(), 0x1, ROOT)) == E.EOPNOTSUPP
    ext4 = meta(ROOTFS_DEV)
    set_flags(ext4, 0x100 | FS_NODUMP_FL, ROOT)       # 0x100: visible, not modifiable
    assert get_flags(ext4) == FS_NODUMP_FL               # and extents cleared, as natively


def test_directory_only_flags_are_refused_on_a_regular_ext4_file():
    assert errno_of(lambda: set_flags(meta(ROOTFS_DEV), FS_DIRSYNC_FL, ROOT)) == E.EOPNOTSUPP
    directory = meta(ROOTFS_DEV, S_IFDIR)
    set_flags(directory, FS_DIRSYNC_FL, ROOT)
    assert get_flags(directory) == FS_DIRSYNC_FL


@pytest.mark.parametrize("flag", (FS_IMMUTABLE_FL, FS_APPEND_FL))
def test_immutable_and_append_only_need_cap_linux_immutable_both_ways(flag):
    m = meta()
    assert errno_of(lambda: set_flags(m, flag, NO_IMMUTABLE)) == E.EPERM
    set_flags(m, flag, ROOT)
    set_flags(m, flag | FS_NODUMP_FL, NO_IMMUTABLE)      # unchanged: no capability needed
    assert errno_of(lambda: set_flags(m, 0, NO_IMMUTABLE)) == E.EPERM
    assert get_flags(m) == flag | FS_NODUMP_FL


def test_an_append_only_file_opens_for_writing_only_to_append():
    check_open(FS_APPEND_FL, O_RDONLY)
    check_open(FS_APPEND_FL, O_WRONLY | O_APPEND)
    for flags in (O_WRONLY, O_WRONLY | O_APPEND | O_TRUNC):
        assert errno_of(lambda: check_open(FS_APPEND_FL, flags)) == E.EPERM
    check_open(0, O_WRONLY | O_TRUNC)


def test_a_touch_is_refused_by_immutable_only():
    check_unchangeable(FS_APPEND_FL, touch=True)
    assert errno_of(lambda: check_unchangeable(FS_IMMUTABLE_FL, touch=True)) == E.EPERM
    assert errno_of(lambda: check_unchangeable(FS_APPEND_FL)) == E.EPERM


@given(dev=st.sampled_from((SHM_DEV, ROOTFS_DEV)), fmt=st.sampled_from((S_IFREG, S_IFDIR)),
       wanted=st.integers(0, 0xFFFFFFFF), accepted_only=st.booleans())
def test_a_setflags_keeps_exactly_the_modifiable_bits_it_was_given_or_changes_nothing(
        dev, fmt, wanted, accepted_only):
    """`accepted_only`: the bits the file system accepts (half the cases reach the change)."""
    m = meta(dev, fmt)
    before = get_flags(m)
    rules = rules_of(m)
    if accepted_only:
        wanted &= rules.accepted(fmt)
    try:
        set_flags(m, wanted, ROOT)
    except GuestErrno as e:
        assert e.errno == E.EOPNOTSUPP and get_flags(m) == before      # root: no EPERM
        assert wanted & ~rules.accepted(fmt) and not accepted_only
        return
    assert get_flags(m) == (before & ~rules.modifiable) | (wanted & rules.modifiable)
    assert not get_flags(m) & ~rules.visible


def test_every_combination_of_the_tmpfs_flags_is_kept():
    for wanted in range(0, 0x100, 0x10):
        m = meta()
        set_flags(m, wanted, ROOT)
        assert get_flags(m) == wanted
    assert SHMEM.visible == 0xF0 and EXT4.initial == FS_EXTENTS_FL
