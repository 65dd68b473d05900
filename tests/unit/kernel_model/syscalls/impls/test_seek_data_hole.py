"""lseek's SEEK_DATA and SEEK_HOLE on a file with holes (LTP lseek11): before, lseek refused
both whences with EINVAL, so programs (cp --sparse, tar, LTP) found no way to skip holes."""
from kernel_model import errno as E
from kernel_model.fs.constants import O_CREAT, O_RDWR, SEEK_DATA, SEEK_HOLE
from tests.unit.kernel_model.call_script import run_script

PAGE = 4096


def test_seek_data_and_hole_find_the_written_pages(arch):
    offset_words = (2 * PAGE, 0) if arch == "i386" else (2 * PAGE,)   # pwrite64's loff_t
    results, _, _ = run_script(arch, [
        ("open", "BUF", O_RDWR | O_CREAT, 0o600),
        ("ftruncate", 3, 4 * PAGE),
        ("pwrite64", 3, "BUF", 3, *offset_words),
        ("lseek", 3, 0, SEEK_DATA),
        ("lseek", 3, 0, SEEK_HOLE),
        ("lseek", 3, 2 * PAGE + 1, SEEK_DATA),
        ("lseek", 3, 2 * PAGE + 1, SEEK_HOLE),
        ("lseek", 3, 3 * PAGE, SEEK_DATA),
        ("lseek", 3, 4 * PAGE, SEEK_HOLE),
        ("lseek", 3, 0, 5),
    ], data=b"/sparse\0")
    assert results[:3] == [3, 0, 3]
    assert results[3:] == [2 * PAGE, 0, 2 * PAGE + 1, 3 * PAGE, -E.ENXIO, -E.ENXIO, -E.EINVAL]
