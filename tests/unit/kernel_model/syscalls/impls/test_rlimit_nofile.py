"""RLIMIT_NOFILE is the fd table's limit (alloc_fd: EMFILE at or above the soft limit), set by
prlimit64 or setrlimit; a hard limit above nr_open is EPERM (do_prlimit). LTP's pipe15 raises
its soft limit to open 2048 descriptors, which failed with EMFILE at 1024 before."""
import struct

from kernel_model import errno as E

from ...call_script import run_script

RLIMIT_NOFILE, O_RDONLY = 7, 0


def test_nofile_limit_is_the_fd_tables(arch):
    data = struct.pack("<QQ", 4, 4096) + struct.pack("<QQ", 2048, 4096) \
        + struct.pack("<QQ", 4096, 1 << 21)
    results, _, _ = run_script(arch, [
        ("prlimit64", 0, RLIMIT_NOFILE, "BUF", 0),
        ("open", "/f", O_RDONLY),
        ("open", "/f", O_RDONLY),                    # fd 4 is at the soft limit
        ("dup2", 3, 5),                              # so is 5
        ("prlimit64", 0, RLIMIT_NOFILE, "BUF+16", 0),
        ("dup2", 3, 2000),
        ("prlimit64", 0, RLIMIT_NOFILE, "BUF+32", 0),    # above nr_open
    ], data=data)
    assert results == [0, 3, -E.EMFILE, -E.EBADF, 0, 2000, -E.EPERM]
