"""Write-through mode: changes reach the host folder, and never anything outside it."""
import os

import pytest

from kernel_model import errno as E
from kernel_model.errors import KernelError
from kernel_model.fs import FileSystem, O_CREAT, O_RDONLY, O_WRONLY

from .conftest import host_tree
from .helpers import PROC, errno_of, make_rootfs, names, read_file, write_file


@pytest.fixture
def wfs(rootfs):
    return FileSystem(str(rootfs), writable=True, clock=lambda: 5_000_000_000)


def test_writes_reach_the_host_folder(wfs, rootfs):
    write_file(wfs, b"/etc/passwd", b"changed")
    wfs.mkdir(b"/tmp", 0o1777, b"/", PROC)
    write_file(wfs, b"/tmp/f", b"data")
    wfs.rename(b"/usr", b"/usr2", b"/", PROC)
    wfs.unlink(b"/bin/prog", b"/", PROC)
    wfs.symlink(b"/etc/passwd", b"/tmp/ln", b"/", PROC)
    assert (rootfs / "etc" / "passwd").read_bytes() == b"changed"
    assert (rootfs / "tmp" / "f").read_bytes() == b"data"
    assert (rootfs / "tmp").stat().st_mode & 0o7777 == 0o1777     # no host umask
    assert (rootfs / "usr2" / "lib" / "libc.so").exists()
    assert not (rootfs / "bin" / "prog").exists()
    assert os.readlink(rootfs / "tmp" / "ln") == "/etc/passwd"
    assert read_file(wfs, b"/tmp/ln") == b"changed"


def test_changed_host_files_get_virtual_times(wfs, rootfs):
    write_file(wfs, b"/new", b"x")
    assert (rootfs / "new").stat().st_mtime_ns == 5_000_000_000
    st = wfs.stat(b"/new", b"/", PROC)
    assert (st.mtime_ns, st.ctime_ns, st.atime_ns) == (5_000_000_000,) * 3
    wfs.utimens(b"/new", None, 77, b"/", PROC)
    assert wfs.stat(b"/new", b"/", PROC).mtime_ns == 77


def test_symlinks_written_through_still_cannot_escape(tmp_path):
    root = make_rootfs(tmp_path / "root")
    wfs = FileSystem(str(root), writable=True)
    wfs.symlink(str(tmp_path).encode(), b"/esc", b"/", PROC)
    wfs.symlink(b"../../../..", b"/up", b"/", PROC)
    before = host_tree(tmp_path)
    assert errno_of(wfs.open, b"/esc/outside", O_WRONLY | O_CREAT, 0o644, b"/", PROC) == E.ENOENT
    write_file(wfs, b"/up/created", b"inside")
    assert (root / "created").read_bytes() == b"inside"
    assert not (tmp_path / "created").exists()
    assert set(host_tree(tmp_path)) - set(before) == {"root/created"}


def test_writing_through_a_symlink_never_follows_it_on_the_host(tmp_path):
    (tmp_path / "victim").write_bytes(b"host")
    root = make_rootfs(tmp_path / "root")
    (root / "ptr").symlink_to(tmp_path / "victim")
    wfs = FileSystem(str(root), writable=True)
    assert errno_of(wfs.truncate, b"/ptr", 0, b"/", PROC) == E.ENOENT
    assert errno_of(wfs.chmod, b"/ptr", 0o777, b"/", PROC) == E.ENOENT
    wfs.unlink(b"/ptr", b"/", PROC)
    assert (tmp_path / "victim").read_bytes() == b"host"


def test_writable_errors_come_out_as_linux_errno(wfs):
    assert errno_of(wfs.rmdir, b"/etc", b"/", PROC) == E.ENOTEMPTY
    assert errno_of(wfs.mkdir, b"/etc", 0o755, b"/", PROC) == E.EEXIST
    assert errno_of(wfs.unlink, b"/etc", b"/", PROC) == E.EISDIR
    assert errno_of(wfs.rename, b"/usr", b"/etc", b"/", PROC) == E.ENOTEMPTY


def test_listing_and_open_file_survive_unlink(wfs):
    write_file(wfs, b"/f", b"kept")
    f = wfs.open(b"/f", O_RDONLY, 0, b"/", PROC)
    wfs.unlink(b"/f", b"/", PROC)
    assert f.read(10) == b"kept"
    f.close()
    assert b"f" not in names(wfs, b"/")


def test_writable_needs_a_rootfs_folder(tmp_path):
    with pytest.raises(KernelError):
        FileSystem(None, writable=True)
    with pytest.raises(KernelError):
        FileSystem(str(tmp_path / "missing"))


def test_fifos_are_host_fifos_sharing_one_pipe_slot(wfs, rootfs):
    wfs.mknod(b"/ff", 0o010640, b"/", PROC)
    assert os.stat(rootfs / "ff").st_mode == 0o010640
    one = wfs.open(b"/ff", O_RDONLY, 0, b"/", PROC).node
    two = wfs.open(b"/ff", O_WRONLY, 0, b"/", PROC).node
    assert one is not two and one.pipe is None
    one.pipe = "the pipe"                  # what kernel_model/fs/fifo.py keeps while ends are open
    assert two.pipe == "the pipe"
    two.pipe = None
    assert one.pipe is None
