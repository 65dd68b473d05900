"""The errno of each failing call, the same in overlay and write-through mode (Linux's)."""
import pytest

from kernel_model import errno as E
from kernel_model.fs import (FileSystem, O_CREAT, O_DIRECTORY, O_EXCL, O_NOFOLLOW, O_RDONLY,
                             O_TMPFILE_BIT, O_WRONLY, R_OK, W_OK, X_OK)

from .helpers import PROC

CWD = b"/"

CASES = [
    # (call, args, errno)
    ("open", (b"/nope", O_RDONLY, 0), E.ENOENT),
    ("open", (b"/nope/x", O_WRONLY | O_CREAT, 0o644), E.ENOENT),
    ("open", (b"/new/", O_WRONLY | O_CREAT, 0o644), E.EISDIR),
    ("open", (b"/etc/passwd", O_WRONLY | O_CREAT | O_EXCL, 0o644), E.EEXIST),
    ("open", (b"/etc/abs", O_RDONLY | O_NOFOLLOW, 0), E.ELOOP),
    ("open", (b"/etc/passwd", O_RDONLY | O_DIRECTORY, 0), E.ENOTDIR),
    ("open", (b"/etc", O_WRONLY, 0), E.EISDIR),
    # O_TMPFILE: procfs has no i_op->tmpfile; the path must be a directory; write access
    ("open", (b"/proc", O_TMPFILE_BIT | O_DIRECTORY | O_WRONLY, 0o600), E.EOPNOTSUPP),
    ("open", (b"/etc/passwd", O_TMPFILE_BIT | O_DIRECTORY | O_WRONLY, 0o600), E.ENOTDIR),
    ("open", (b"/nope", O_TMPFILE_BIT | O_DIRECTORY | O_WRONLY, 0o600), E.ENOENT),
    ("open", (b"/etc", O_TMPFILE_BIT | O_DIRECTORY | O_RDONLY, 0o600), E.EINVAL),
    ("open", (b"/etc", O_TMPFILE_BIT | O_DIRECTORY | O_CREAT | O_WRONLY, 0o600), E.EINVAL),
    ("open", (b"/dev/tty", O_RDONLY, 0), E.ENXIO),
    ("open", (b"/loop1", O_RDONLY, 0), E.ELOOP),
    ("stat", (b"/etc/passwd/x",), E.ENOTDIR),
    ("readlink", (b"/etc/passwd",), E.EINVAL),
    ("readlink", (b"/nope",), E.ENOENT),
    ("mkdir", (b"/etc", 0o755), E.EEXIST),
    ("mkdir", (b"/", 0o755), E.EEXIST),
    ("mkdir", (b"/etc/abs", 0o755), E.EEXIST),
    ("mkdir", (b"/nope/x", 0o755), E.ENOENT),
    ("mkdir", (b"/etc/passwd/x", 0o755), E.ENOTDIR),
    ("mkdir", (b"/" + b"n" * 256, 0o755), E.ENAMETOOLONG),
    ("rmdir", (b"/etc",), E.ENOTEMPTY),
    ("rmdir", (b"/etc/passwd",), E.ENOTDIR),
    ("rmdir", (b"/lib",), E.ENOTDIR),
    ("rmdir", (b"/nope",), E.ENOENT),
    ("rmdir", (b"/etc/.",), E.EINVAL),
    ("rmdir", (b"/etc/..",), E.ENOTEMPTY),
    ("rmdir", (b"/",), E.EBUSY),
    ("rmdir", (b"/proc",), E.EBUSY),
    ("unlink", (b"/etc",), E.EISDIR),
    ("unlink", (b"/",), E.EISDIR),
    ("unlink", (b"/nope",), E.ENOENT),
    ("unlink", (b"/etc/passwd/",), E.ENOTDIR),
    ("rename", (b"/nope", b"/x"), E.ENOENT),
    ("rename", (b"/etc", b"/etc/sub"), E.EINVAL),
    ("rename", (b"/etc/passwd", b"/etc"), E.ENOTEMPTY),
    ("rename", (b"/etc/passwd", b"/usr"), E.EISDIR),
    ("rename", (b"/usr", b"/etc/passwd"), E.ENOTDIR),
    ("rename", (b"/usr", b"/etc"), E.ENOTEMPTY),
    ("rename", (b"/etc/passwd", b"/proc/x"), E.EXDEV),
    ("rename", (b"/etc/.", b"/x"), E.EBUSY),
    ("symlink", (b"", b"/x"), E.ENOENT),
    ("symlink", (b"t", b"/etc/passwd"), E.EEXIST),
    ("symlink", (b"t", b"/nope/x"), E.ENOENT),
    ("link", (b"/etc", b"/e2"), E.EPERM),
    ("link", (b"/nope", b"/x"), E.ENOENT),
    ("link", (b"/etc/passwd", b"/bin/prog"), E.EEXIST),
    ("link", (b"/etc/passwd", b"/dev/x"), E.EXDEV),
    ("truncate", (b"/etc", 0), E.EISDIR),
    ("truncate", (b"/etc/passwd", -1), E.EINVAL),
    ("truncate", (b"/dev/null", 0), E.EINVAL),
    ("truncate", (b"/nope", 0), E.ENOENT),
    ("chmod", (b"/nope", 0o644), E.ENOENT),
    ("realpath", (b"/nope",), E.ENOENT),
]


@pytest.mark.parametrize("writable", [False, True], ids=["overlay", "write-through"])
@pytest.mark.parametrize("call,args,errno", CASES,
                         ids=[f"{c}-{a[0].decode()[:20]}-{E.NAMES[e]}" for c, a, e in CASES])
def test_errno(rootfs, writable, call, args, errno):
    fs = FileSystem(str(rootfs), writable=writable)
    with pytest.raises(E.GuestErrno) as failure:
        getattr(fs, call)(*args, CWD, PROC)
    assert failure.value.errno == errno


@pytest.mark.parametrize("path,mode,errno", [(b"/etc/passwd", X_OK, E.EACCES),
                                             (b"/etc/passwd", 8, E.EINVAL),
                                             (b"/nope", R_OK, E.ENOENT)])
def test_access_errno(fs, path, mode, errno):
    with pytest.raises(E.GuestErrno) as failure:
        fs.access(path, CWD, PROC, mode)
    assert failure.value.errno == errno


def test_access_succeeds_for_root(fs):
    fs.access(b"/etc/passwd", CWD, PROC, R_OK | W_OK)
    fs.access(b"/bin/prog", CWD, PROC, X_OK)
    fs.access(b"/etc", CWD, PROC, X_OK)
