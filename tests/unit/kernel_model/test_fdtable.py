"""kernel_model.fdtable: Linux fd semantics (fs/file.c): lowest free descriptor, shared open
file descriptions with reference counts, close-on-exec, fork copies."""
import pytest

from kernel_model import errno as E
from kernel_model.errno import GuestErrno
from kernel_model.fdtable import FdTable


class CountingFile:
    """An open file description that counts how often it is really closed."""

    def __init__(self, name: str):
        self.name = name
        self.closed = 0

    def close(self) -> None:
        self.closed += 1


def errno_of(call) -> int:
    with pytest.raises(GuestErrno) as info:
        call()
    return info.value.errno


def test_install_takes_the_lowest_free_descriptor():
    fds = FdTable()
    a, b, c = CountingFile("a"), CountingFile("b"), CountingFile("c")
    assert [fds.install(a), fds.install(b), fds.install(c)] == [0, 1, 2]
    fds.close(1)
    assert fds.install(CountingFile("d")) == 1          # the hole is reused first
    assert fds.install(CountingFile("e")) == 3
    assert fds.install(CountingFile("f"), minimum=10) == 10   # F_DUPFD semantics


def test_dup_shares_the_description_and_last_close_closes_it_once():
    fds = FdTable()
    f = CountingFile("f")
    fd = fds.install(f)
    dup1 = fds.install(fds.get(fd))
    dup2 = fds.install(fds.get(fd), at=7)
    assert fds.get(dup1) is f and fds.get(dup2) is f
    fds.close(fd)
    fds.close(dup2)
    assert f.closed == 0
    fds.close(dup1)
    assert f.closed == 1
    assert errno_of(lambda: fds.close(dup1)) == E.EBADF
    assert f.closed == 1


def test_install_at_an_open_descriptor_closes_the_previous_file():
    fds = FdTable()
    old, new = CountingFile("old"), CountingFile("new")
    fds.install(old, at=3)
    fds.install(new, at=3)
    assert old.closed == 1 and fds.get(3) is new and new.closed == 0


def test_install_a_file_over_its_only_descriptor_keeps_it_open():
    """dup2(fd, fd)-like reinstall: the file must not be closed in between."""
    fds = FdTable()
    f = CountingFile("f")
    fds.install(f, at=4)
    fds.install(f, at=4)
    assert f.closed == 0 and fds.get(4) is f
    fds.close(4)
    assert f.closed == 1


def test_cloexec_descriptors_close_on_exec_and_others_survive():
    fds = FdTable()
    keep, drop = CountingFile("keep"), CountingFile("drop")
    fds.install(keep)
    fds.install(drop, cloexec=True)
    shared = fds.install(keep, cloexec=True)          # a cloexec dup of a kept file
    fds.close_on_exec()
    assert sorted(fds.targets()) == [0]
    assert drop.closed == 1 and keep.closed == 0
    assert errno_of(lambda: fds.get(shared)) == E.EBADF


def test_fork_copy_shares_descriptions_until_both_sides_close():
    parent = FdTable()
    f = CountingFile("f")
    parent.install(f)
    child = parent.copy()
    parent.close_all()
    assert f.closed == 0 and child.get(0) is f
    child.close_all()
    assert f.closed == 1


def test_errors_bad_descriptor_and_table_full():
    fds = FdTable(limit=2)
    assert errno_of(lambda: fds.get(0)) == E.EBADF
    assert errno_of(lambda: fds.entry(5)) == E.EBADF
    fds.install(CountingFile("a"))
    fds.install(CountingFile("b"))
    assert errno_of(lambda: fds.install(CountingFile("c"))) == E.EMFILE
    assert errno_of(lambda: fds.install(CountingFile("d"), at=2)) == E.EBADF
    assert errno_of(lambda: fds.install(CountingFile("e"), at=-1)) == E.EBADF


def test_targets_are_in_descriptor_order():
    fds = FdTable()
    files = {fd: CountingFile(str(fd)) for fd in (5, 1, 3)}
    for fd, f in files.items():
        fds.install(f, at=fd)
    assert list(fds.targets()) == [1, 3, 5]
