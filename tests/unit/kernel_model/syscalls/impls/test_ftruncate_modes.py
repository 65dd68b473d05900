"""ftruncate's errors in do_sys_ftruncate's order, both ABIs: a negative length is EINVAL
before the descriptor is looked at, a bad descriptor EBADF, a read-only one EINVAL (it was
EBADF: LTP ftruncate03), a pipe EINVAL."""
from kernel_model import errno as E

from ...call_script import run_script

O_RDONLY, O_RDWR = 0, 2


def test_ftruncate_errors(arch):
    name = "ftruncate"
    minus_one = (1 << (32 if arch == "i386" else 64)) - 1
    results, _, _ = run_script(arch, [
        ("open", "/f", O_RDONLY), ("open", "/f", O_RDWR), ("pipe", "BUF"),
        (name, 3, 4),
        (name, 99, minus_one),
        (name, 99, 4),
        (name, 6, 4),
        (name, 4, 4),
    ])
    assert results == [3, 4, 0, -E.EINVAL, -E.EINVAL, -E.EBADF, -E.EINVAL, 0]
