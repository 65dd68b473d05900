"""renameat2's RENAME_EXCHANGE (LTP renameat201 and renameat202 got EINVAL): two existing names
trade their inodes, a directory and a file too; a missing one is ENOENT, the flag with
RENAME_NOREPLACE EINVAL, one name the other's ancestor EINVAL (fs/namei.c do_renameat2)."""
import pytest

from kernel_model import errno as E

from ...call_script import run_script

AT_FDCWD = -100
RENAME_NOREPLACE, RENAME_EXCHANGE = 1, 2
O_RDONLY, O_DIRECTORY = 0, 0o200000


@pytest.mark.parametrize("abi", ["i386", "x86_64"])
def test_two_names_trade_their_files(abi):
    results, buf, _ = run_script(abi, [
        ("renameat2", AT_FDCWD, "/d", AT_FDCWD, "/d/g", RENAME_EXCHANGE),
        ("renameat2", AT_FDCWD, "/f", AT_FDCWD, "/d", RENAME_EXCHANGE),
        ("open", "/d", O_RDONLY), ("read", "@2", "BUF", 6), ("open", "/f", O_DIRECTORY),
        ("renameat2", AT_FDCWD, "/l", AT_FDCWD, "/nonexistent", RENAME_EXCHANGE),
        ("renameat2", AT_FDCWD, "/l", AT_FDCWD, "/d", RENAME_EXCHANGE | RENAME_NOREPLACE),
        ("renameat2", AT_FDCWD, "/l", AT_FDCWD, "/d", 8)])
    assert results[:2] == [-E.EINVAL, 0] and results[3] == 6 and buf[:6] == b"hello\n"
    assert results[2] >= 3 and results[4] >= 3
    assert results[5:] == [-E.ENOENT, -E.EINVAL, -E.EINVAL]
