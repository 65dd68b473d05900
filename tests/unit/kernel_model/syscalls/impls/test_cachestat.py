"""cachestat (LTP cachestat02 got ENOSYS): the pages of a file's range that hold data are
cached, a sparse file's holes are not, and Linux's checks come in its order (mm/filemap.c)."""
import struct

import pytest

from kernel_model import errno as E

from ...call_script import BUF_SIZE, run_script

PAGE = 4096
O_RDWR_CREAT = 0o102
SEEK_SET = 0
WHOLE, FIRST_PAGE = 0, 16                     # the two cachestat_range structs in BUF
ANSWERS = (64, 128, 192)                      # where the three struct cachestat answers go


@pytest.mark.parametrize("abi", ["i386", "x86_64"])
def test_cached_pages_are_the_pages_holding_data(abi):
    ranges = struct.pack("<QQQQ", 0, 0, 0, PAGE)
    results, buf, _ = run_script(abi, [
        ("open", "/f", 0), ("cachestat", "@0", "BUF+0", "BUF+64", 0),
        ("open", "/tmp/new", O_RDWR_CREAT, 0o600), ("ftruncate", "@2", 5 * PAGE),
        ("lseek", "@2", 3 * PAGE, SEEK_SET), ("write", "@2", "BUF+300", 1),
        ("cachestat", "@2", "BUF+0", "BUF+128", 0), ("cachestat", "@2", "BUF+16", "BUF+192", 0)],
        data=ranges.ljust(BUF_SIZE, b"\xff"))
    assert results[1] == results[6] == results[7] == 0
    answers = [struct.unpack_from("<5Q", buf, at) for at in ANSWERS]
    assert answers[0] == (1, 0, 0, 0, 0)       # /f: 600 bytes, one page
    assert answers[1] == (1, 0, 0, 0, 0)       # 5 pages long, one written: the others are holes
    assert answers[2] == (0, 0, 0, 0, 0)       # its first page is a hole


@pytest.mark.parametrize("abi", ["i386", "x86_64"])
def test_the_checks_come_in_linux_order(abi):
    results, _, _ = run_script(abi, [
        ("open", "/f", 0), ("cachestat", 99, 0, 0, 0), ("cachestat", "@0", 0, "BUF", 0),
        ("cachestat", "@0", "BUF", "BUF+64", 1), ("cachestat", "@0", "BUF", 0, 0),
        ("cachestat", "@0", "BUF", "BUF+64", 0)])
    assert results[1:] == [-E.EBADF, -E.EFAULT, -E.EINVAL, -E.EFAULT, 0]
