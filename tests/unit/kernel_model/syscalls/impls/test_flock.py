"""flock(2) on both ABIs: two descriptions of one file are two owners (LOCK_EX against
LOCK_SH is EWOULDBLOCK with LOCK_NB), shared locks coexist, a lock converts, closing the
description drops its lock, flock and fcntl locks do not meet; EINVAL and EBADF. It was ENOSYS
(LTP flock01-06)."""
import struct

from kernel_model import errno as E

from ...call_script import run_script

LOCK_SH, LOCK_EX, LOCK_NB, LOCK_UN = 1, 2, 4, 8
O_RDONLY = 0


def test_flock(arch):
    fcntl = "fcntl" if arch == "x86_64" else "fcntl64"
    setlk = struct.pack("<hh4xqqi4x", 1, 0, 0, 0, 0) if arch == "x86_64" \
        else struct.pack("<hhiii", 1, 0, 0, 0, 0)
    results, _, _ = run_script(arch, [
        ("open", "/f", O_RDONLY), ("open", "/f", O_RDONLY),
        ("flock", 3, LOCK_SH), ("flock", 4, LOCK_SH | LOCK_NB),      # shared with shared
        ("flock", 4, LOCK_EX | LOCK_NB),                            # 3 still shares it
        ("flock", 3, LOCK_UN),
        ("flock", 4, LOCK_EX | LOCK_NB),                            # converted
        ("flock", 3, LOCK_SH | LOCK_NB),
        ("close", 4),                                               # the lock goes with it
        ("flock", 3, LOCK_EX | LOCK_NB),
        ("flock", 3, 0), ("flock", 3, LOCK_SH | LOCK_EX), ("flock", 99, LOCK_SH),
        ("open", "/f", 2),                                          # 4, read-write
        (fcntl, 4, 6, "BUF"),                                       # F_SETLK write lock: allowed
    ], data=setlk)
    assert results == [3, 4, 0, 0, -E.EAGAIN, 0, 0, -E.EAGAIN, 0, 0, -E.EINVAL, -E.EINVAL,
                       -E.EBADF, 4, 0]
