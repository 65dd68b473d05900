"""file_getattr/file_setattr (LTP file_attr04 got ENOSYS): a relative name under a dirfd that is
not a directory is ENOTDIR, a new file's attributes read as zeros, and the rootfs (ext4, without
the project feature) refuses a project id (fs/file_attr.c, ext4_fileattr_set)."""
import pytest

from kernel_model import errno as E

from ...call_script import run_script

AT_FDCWD, AT_EMPTY_PATH = -100, 0x1000
SIZE = 24                                      # FILE_ATTR_SIZE_VER0


@pytest.mark.parametrize("abi", ["i386", "x86_64"])
def test_attributes_by_path(abi):
    data = (bytes(SIZE) + bytes(16) + b"\x05" + bytes(SIZE - 17)).ljust(100, b"\0") + b"\xdd" * SIZE + b"\xee" * 2
    results, buf, _ = run_script(abi, [
        ("file_getattr", AT_FDCWD, "/f", "BUF+100", SIZE, 0),
        ("open", "/f", 0), ("file_getattr", "@1", "f", "BUF+100", SIZE, 0),
        ("file_getattr", AT_FDCWD, "/nonexistent", "BUF+100", SIZE, 0),
        ("file_getattr", AT_FDCWD, "/f", "BUF+100", SIZE - 1, 0),
        ("file_getattr", AT_FDCWD, "/f", "BUF+100", 4097, 0),
        ("file_getattr", AT_FDCWD, "/f", "BUF+100", SIZE, 0x2),
        ("file_setattr", AT_FDCWD, "/f", "BUF", SIZE, 0),
        ("file_setattr", AT_FDCWD, "/f", "BUF+24", SIZE, 0),       # fa_projid 5
        ("file_setattr", "@1", "", "BUF", SIZE, AT_EMPTY_PATH),
        ("file_setattr", "@1", "f", "BUF", SIZE, 0)], data=data)
    assert results == [0, results[1], -E.ENOTDIR, -E.ENOENT, -E.EINVAL, -E.E2BIG, -E.EINVAL,
                       0, -E.EOPNOTSUPP, 0, -E.ENOTDIR]
    assert buf[100:100 + SIZE] == bytes(SIZE) and buf[100 + SIZE:102 + SIZE] == b"\xee\xee"
