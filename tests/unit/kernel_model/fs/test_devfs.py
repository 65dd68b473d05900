"""/dev: modeled devices, seeded randomness, no host device ever opened."""
from kernel_model import errno as E
from kernel_model.fs import (DT_DIR, FileSystem, O_DIRECTORY, O_RDONLY, O_RDWR, O_TRUNC,
                             O_WRONLY, S_IFCHR, S_IFMT, SEEK_END, SEEK_SET, makedev)

from .helpers import PROC, errno_of


def _open(fs, path, flags=O_RDONLY):
    return fs.open(path, flags, 0, b"/", PROC)


def test_null_reads_eof_and_swallows_writes(fs):
    f = _open(fs, b"/dev/null", O_RDWR | O_TRUNC)
    assert f.read(100) == b""
    assert f.write(b"gone") == 4
    assert f.seek(10, SEEK_SET) == 0
    st = f.stat()
    assert (st.mode & S_IFMT, st.mode & 0o777, st.rdev) == (S_IFCHR, 0o666, makedev(1, 3))


def test_zero_reads_zeros(fs):
    f = _open(fs, b"/dev/zero")
    assert f.read(4096) == bytes(4096)
    assert f.seek(0, SEEK_END) == 0


def test_urandom_is_seeded_deterministic_and_shared_with_random(rootfs):
    first = FileSystem(str(rootfs), seed=1)
    again = FileSystem(str(rootfs), seed=1)
    other = FileSystem(str(rootfs), seed=2)
    a = _open(first, b"/dev/urandom").read(64)
    assert a == _open(again, b"/dev/urandom").read(64)
    assert a != _open(other, b"/dev/urandom").read(64)
    assert len(a) == 64 and len(set(a)) > 16
    # One stream: the next read continues it, whichever of the two files is read.
    b = _open(first, b"/dev/random").read(32)
    again_stream = _open(again, b"/dev/random")
    assert b == again_stream.read(32) and b != a[:32]


def test_tty_has_no_device(fs):
    assert errno_of(_open, fs, b"/dev/tty", O_RDWR) == E.ENXIO
    assert fs.stat(b"/dev/tty", b"/", PROC).rdev == makedev(5, 0)


def test_std_streams_are_symlinks_to_proc_self_fd(fs):
    assert fs.readlink(b"/dev/stdin", b"/", PROC) == b"/proc/self/fd/0"
    assert fs.readlink(b"/dev/stdout", b"/", PROC) == b"/proc/self/fd/1"
    assert fs.readlink(b"/dev/stderr", b"/", PROC) == b"/proc/self/fd/2"
    assert fs.realpath(b"/dev/fd", b"/", PROC) == b"/proc/42/fd"


def test_dev_hides_the_rootfs_dev_and_refuses_new_files(fs, rootfs):
    (rootfs / "dev").mkdir()
    (rootfs / "dev" / "host-only").write_bytes(b"")
    assert errno_of(fs.stat, b"/dev/host-only", b"/", PROC) == E.ENOENT
    assert errno_of(_open, fs, b"/dev/new", O_WRONLY | 0o100) == E.EACCES
    assert errno_of(fs.mkdir, b"/dev/d", 0o755, b"/", PROC) == E.EPERM
    assert errno_of(fs.unlink, b"/dev/null", b"/", PROC) == E.EPERM
    assert errno_of(fs.rmdir, b"/dev", b"/", PROC) == E.EBUSY
    assert errno_of(fs.truncate, b"/dev/null", 0, b"/", PROC) == E.EINVAL


def test_device_metadata_changes_are_kept(fs):
    fs.chmod(b"/dev/null", 0o600, b"/", PROC)
    fs.utimens(b"/dev/null", 3, 4, b"/", PROC)
    st = fs.stat(b"/dev/null", b"/", PROC)
    assert (st.mode & 0o777, st.atime_ns, st.mtime_ns) == (0o600, 3, 4)


def test_dev_is_sized_as_a_tmpfs_directory(fs):
    """devtmpfs is a tmpfs (mm/shmem.c): 20 bytes (BOGO_DIRENT_SIZE) per entry and two for
    "." and "..", no blocks, two links and one per subdirectory; ls / shows that size."""
    listed = fs.open(b"/dev", O_RDONLY | O_DIRECTORY, 0, b"/", PROC).getdents()
    st = fs.stat(b"/dev", b"/", PROC)
    assert len(listed) > 2
    folders = [entry for entry in listed[2:] if entry.dtype == DT_DIR]
    assert folders                                          # /dev/shm
    assert (st.size, st.blocks, st.nlink) == (20 * len(listed), 0, 2 + len(folders))
