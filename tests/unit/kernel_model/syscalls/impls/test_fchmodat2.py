"""fchmodat2 (LTP fchmodat2_02 got ENOSYS): fchmodat with flags (fs/open.c do_fchmodat):
AT_EMPTY_PATH on an O_PATH descriptor changes its file's mode (fchmod refuses the same
descriptor), AT_SYMLINK_NOFOLLOW on a symlink is EOPNOTSUPP, any other flag EINVAL."""
import struct

import pytest

from kernel_model import errno as E

from ...call_script import run_script

AT_FDCWD, AT_SYMLINK_NOFOLLOW, AT_EMPTY_PATH = -100, 0x100, 0x1000
O_PATH = 0o10000000
STATX_MODE_AT = 28                             # struct statx's stx_mode (u16)


@pytest.mark.parametrize("abi", ["i386", "x86_64"])
def test_fchmodat2_flags(abi):
    results, buf, _ = run_script(abi, [
        ("fchmodat2", AT_FDCWD, "/f", 0o600, 0), ("fchmodat2", AT_FDCWD, "/l", 0o600, AT_SYMLINK_NOFOLLOW),
        ("fchmodat2", AT_FDCWD, "/f", 0o600, 0xFFFFFFFF), ("fchmodat2", -1, "f", 0o600, 0),
        ("fchmodat2", AT_FDCWD, "/nonexistent", 0o600, 0),
        ("open", "/f", O_PATH), ("fchmod", "@5", 0o640), ("fchmodat2", "@5", "", 0o604, AT_EMPTY_PATH),
        ("statx", AT_FDCWD, "/f", 0, 0xFFF, "BUF")])
    assert results == [0, -E.EOPNOTSUPP, -E.EINVAL, -E.EBADF, -E.ENOENT, results[5], -E.EBADF, 0, 0]
    assert results[5] >= 3
    assert struct.unpack_from("<H", buf, STATX_MODE_AT)[0] & 0o7777 == 0o604


@pytest.mark.parametrize("abi", ["i386", "x86_64"])
def test_fchmodat_without_flags_still_follows_symlinks(abi):
    results, buf, _ = run_script(abi, [("fchmodat", AT_FDCWD, "/l", 0o611),
                                       ("statx", AT_FDCWD, "/f", 0, 0xFFF, "BUF")])
    assert results == [0, 0]
    assert struct.unpack_from("<H", buf, STATX_MODE_AT)[0] & 0o7777 == 0o611
