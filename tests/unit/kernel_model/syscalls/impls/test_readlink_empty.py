"""readlinkat with an empty path reads the symlink dirfd is an O_PATH | O_NOFOLLOW descriptor
of (LTP readlinkat01 got ENOENT); for any other file, or the cwd, it is ENOENT (do_readlinkat)."""
import pytest

from kernel_model import errno as E

from ...call_script import run_script

AT_FDCWD = -100
O_PATH, O_NOFOLLOW = 0o10000000, 0o400000


@pytest.mark.parametrize("abi", ["i386", "x86_64"])
def test_an_empty_path_reads_the_descriptors_own_link(abi):
    results, buf, _ = run_script(abi, [
        ("open", "/l", O_PATH | O_NOFOLLOW), ("readlinkat", "@0", "", "BUF", 100),
        ("open", "/f", O_PATH), ("readlinkat", "@2", "", "BUF+200", 100),
        ("readlinkat", AT_FDCWD, "", "BUF+200", 100), ("readlinkat", 99, "", "BUF+200", 100)])
    assert results[1] == 1 and buf[:1] == b"f"
    assert results[3:] == [-E.ENOENT, -E.ENOENT, -E.EBADF]
