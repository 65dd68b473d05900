"""Open file descriptions: offsets, access modes, directories, stdio wrappers."""
import os

from kernel_model import errno as E
from kernel_model.fs import (CapturedOutput, DT_DIR, DT_LNK, DT_REG, O_APPEND, O_CREAT,
                             O_DIRECTORY, O_PATH, O_RDONLY, O_RDWR, O_WRONLY, S_IFIFO, S_IFMT,
                             SEEK_CUR, SEEK_DATA, SEEK_END, SEEK_HOLE, SEEK_SET, StdioFile)

from .helpers import PROC, errno_of


def _open(fs, path, flags=O_RDONLY, mode=0o644):
    return fs.open(path, flags, mode, b"/", PROC)


def test_read_write_and_the_shared_offset(fs):
    f = _open(fs, b"/f", O_RDWR | O_CREAT)
    dup = f                                   # a dup'ed fd is the same description
    assert f.write(b"hello world") == 11
    assert dup.seek(0, SEEK_CUR) == 11
    assert f.seek(-5, SEEK_END) == 6
    assert dup.read(100) == b"world"
    assert f.pread(5, 0) == b"hello" and f.seek(0, SEEK_CUR) == 11
    assert f.pwrite(b"J", 0) == 1 and f.pread(3, 0) == b"Jel"


def test_seek_past_end_then_write_leaves_a_hole_of_zeros(fs):
    f = _open(fs, b"/f", O_RDWR | O_CREAT)
    f.seek(4, SEEK_SET)
    f.write(b"x")
    assert f.pread(10, 0) == b"\0\0\0\0x"
    assert f.seek(1, SEEK_DATA) == 1 and f.seek(1, SEEK_HOLE) == 5
    assert errno_of(f.seek, 9, SEEK_DATA) == E.ENXIO
    assert errno_of(f.seek, -1, SEEK_SET) == E.EINVAL
    assert errno_of(f.seek, 0, 7) == E.EINVAL


def test_append_writes_at_the_end(fs):
    f = _open(fs, b"/etc/passwd", O_WRONLY | O_APPEND)
    f.seek(0, SEEK_SET)
    f.write(b"x\n")
    f.pwrite(b"y\n", 0)                       # Linux appends even with pwrite
    assert _open(fs, b"/etc/passwd").read(100).endswith(b"x\ny\n")


def test_access_mode_is_enforced(fs):
    reader = _open(fs, b"/etc/passwd", O_RDONLY)
    writer = _open(fs, b"/etc/passwd", O_WRONLY)
    assert errno_of(reader.write, b"x") == E.EBADF
    assert errno_of(writer.read, 1) == E.EBADF
    assert errno_of(reader.truncate, 0) == E.EINVAL
    writer.truncate(4)
    assert reader.read(100) == b"root"
    path_only = _open(fs, b"/etc/passwd", O_PATH)
    assert errno_of(path_only.read, 1) == E.EBADF
    assert path_only.stat().size == 4


def test_getdents_lists_dot_dotdot_then_the_hosts_entries_and_advances(fs, rootfs):
    kinds = {b"abs": DT_LNK, b"passwd": DT_REG, b"up": DT_LNK}
    host = [(name, kinds[name]) for name in os.listdir(os.fsencode(rootfs / "etc"))]
    d = _open(fs, b"/etc", O_RDONLY | O_DIRECTORY)
    entries = d.getdents(limit=3)
    assert [(e.name, e.dtype) for e in entries] == [(b".", DT_DIR), (b"..", DT_DIR), host[0]]
    rest = d.getdents()
    assert [(e.name, e.dtype) for e in rest] == host[1:]
    assert d.getdents() == []
    assert entries[0].ino == fs.stat(b"/etc", b"/", PROC).ino
    assert entries[1].ino == fs.stat(b"/", b"/", PROC).ino
    d.seek(0, SEEK_SET)
    assert len(d.getdents()) == 5


def test_directory_open_errors(fs):
    d = _open(fs, b"/etc", O_RDONLY)
    assert errno_of(d.read, 10) == E.EISDIR
    assert errno_of(_open, fs, b"/etc", O_WRONLY) == E.EISDIR
    assert errno_of(_open, fs, b"/etc", O_RDONLY | O_CREAT) == E.EISDIR
    assert errno_of(_open, fs, b"/etc/passwd", O_RDONLY | O_DIRECTORY) == E.ENOTDIR
    assert errno_of(_open(fs, b"/etc/passwd").getdents) == E.ENOTDIR


def test_close_releases_and_is_idempotent(fs):
    f = _open(fs, b"/etc/passwd")
    f.close()
    f.close()
    assert f.closed and not f.is_tty


def test_captured_output_collects_and_serves_input():
    out = CapturedOutput(stdin=b"line\n")
    assert out.write(b"a") == 1 and out.write(b"bc") == 2
    assert out.data == b"abc"
    assert out.read(3) == b"lin" and out.read(10) == b"e\n" and out.read(1) == b""
    assert errno_of(out.seek, 0, SEEK_SET) == E.ESPIPE
    assert out.stat().mode & S_IFMT == S_IFIFO and not out.is_tty


def test_stdio_file_passes_through_to_the_host_fd():
    read_end, write_end = os.pipe()
    try:
        writer = StdioFile(write_end)
        assert writer.write(b"through") == 7
        assert StdioFile(read_end).read(100) == b"through"
        assert errno_of(writer.pwrite, b"x", 0) == E.ESPIPE
    finally:
        os.close(read_end)
        os.close(write_end)


def test_empty_write_past_the_end_does_not_extend(fs):
    f = _open(fs, b"/f", O_RDWR | O_CREAT)
    assert f.pwrite(b"", 5) == 0
    assert f.stat().size == 0
