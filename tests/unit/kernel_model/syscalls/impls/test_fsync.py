"""fsync/fdatasync on a file without an fsync operation is EINVAL (vfs_fsync_range; LTP
fdatasync02 on /dev/null and fsync03 on a pipe, a socket and a FIFO got 0); syncfs works on any."""
import pytest

from kernel_model import errno as E

from ...call_script import run_script

O_RDONLY, O_DIRECTORY = 0, 0o200000
AF_UNIX, SOCK_STREAM = 1, 1


@pytest.mark.parametrize("call", ["fsync", "fdatasync"])
@pytest.mark.parametrize("abi", ["i386", "x86_64"])
def test_only_files_with_an_fsync_operation_sync(abi, call):
    results, _, _ = run_script(abi, [
        ("open", "/f", O_RDONLY), ("open", "/", O_DIRECTORY), ("open", "/dev/null", O_RDONLY),
        ("eventfd2", 0, 0), ("socket", AF_UNIX, SOCK_STREAM, 0),
        (call, "@0"), (call, "@1"), (call, "@2"), (call, "@3"), (call, "@4"), (call, 99),
        ("syncfs", "@2"), ("syncfs", "@4")])
    assert min(results[:5]) >= 3
    assert results[5:] == [0, 0, -E.EINVAL, -E.EINVAL, -E.EINVAL, -E.EBADF, 0, 0]
