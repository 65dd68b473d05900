"""Extended attributes through the system calls: every call answered EOPNOTSUPP before, so
LTP's xattr tests (lgetxattr02, listxattr01, llistxattr01 and others) stopped at TCONF "no
xattr support in fs"."""
from kernel_model import errno as E
from kernel_model.fs.constants import O_PATH, O_RDONLY
from tests.unit.kernel_model.call_script import run_script

XATTR_CREATE = 1
# BUF: "user.k\0" at 0, "value" at 8, "trusted.t\0" at 16, "/proc/self/maps\0" at 32
STRINGS = b"user.k\0\0value\0\0\0trusted.t\0" + bytes(6) + b"/proc/self/maps\0"


def test_set_get_list_and_remove_on_a_file(arch):
    results, buf, _ = run_script(arch, [
        ("setxattr", "/f", "BUF", "BUF+8", 5, XATTR_CREATE),
        ("setxattr", "/f", "BUF", "BUF+8", 5, XATTR_CREATE),       # exists: EEXIST
        ("lsetxattr", "/f", "BUF+16", "BUF+8", 2, 0),
        ("getxattr", "/f", "BUF", 0, 0),                          # the length
        ("getxattr", "/f", "BUF", "BUF+512", 4),                  # too small: ERANGE
        ("getxattr", "/f", "BUF", "BUF+512", 64),
        ("listxattr", "/f", "BUF+640", 64),
        ("open", "/f", O_RDONLY),
        ("fremovexattr", "@7", "BUF"),
        ("fgetxattr", "@7", "BUF", "BUF+512", 64),                # gone: ENODATA
        ("getxattr", "BUF+32", "BUF", "BUF+512", 64),             # /proc keeps none
        ("setxattr", "/f", "BUF", "BUF+8", 5, 4),                 # flags: EINVAL
        ("open", "/f", O_PATH),
        ("fgetxattr", "@12", "BUF", "BUF+512", 64),               # O_PATH: EBADF
    ], data=STRINGS)
    assert results[:4] == [0, -E.EEXIST, 0, 5]
    assert results[4:7] == [-E.ERANGE, 5, 17] and buf[512:517] == b"value"
    assert buf[640:657] == b"user.k\0trusted.t\0"
    assert results[8:12] == [0, -E.ENODATA, -E.EOPNOTSUPP, -E.EINVAL]
    assert results[13] == -E.EBADF
