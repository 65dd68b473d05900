"""syslog (an empty, world-readable kernel log; other actions need CAP_SYSLOG) and posix_fadvise
(fadvise64 on both ABIs with i386's split 64-bit arguments, and fadvise64_64)."""
from kernel_model import errno as E

from ...call_script import run_script

CLOSE, OPEN, READ, READ_ALL, CLEAR, CONSOLE_LEVEL, SIZE_UNREAD, SIZE_BUFFER = 0, 1, 2, 3, 5, 8, 9, 10
NOBODY = 65534
O_RDONLY = 0
NORMAL, DONTNEED, NOREUSE = 0, 4, 5
KERNEL_ADDRESS = {"i386": 0xFFFFF000, "x86_64": 0xFFFF_8000_0000_0000}


def test_syslog(arch):
    results, _, _ = run_script(arch, [
        ("syslog", SIZE_BUFFER, 0, 0), ("syslog", READ_ALL, "BUF", 100),
        ("syslog", READ_ALL, 0, 100), ("syslog", READ_ALL, "BUF", -1),
        ("syslog", READ_ALL, "BUF", 0), ("syslog", READ_ALL, 0x10, 100),
        ("syslog", READ_ALL, KERNEL_ADDRESS[arch], 0x2000), ("syslog", READ, 0, 100),
        ("syslog", READ, "BUF", -1), ("syslog", READ, "BUF", 0), ("syslog", CLEAR, 0, 0),
        ("syslog", CLOSE, 0, 0), ("syslog", OPEN, 0, 0), ("syslog", SIZE_UNREAD, 0, 0),
        ("syslog", CONSOLE_LEVEL, 0, 0), ("syslog", CONSOLE_LEVEL, 0, 9),
        ("syslog", CONSOLE_LEVEL, 0, 8), ("syslog", 42, 0, 0)])
    # root holds CAP_SYSLOG; an empty log copies nothing: an unmapped user buffer is no error
    # (access_ok only)
    assert results == [1 << 17, 0, -E.EINVAL, -E.EINVAL, 0, 0, -E.EFAULT, -E.EINVAL, -E.EINVAL,
                       0, 0, 0, 0, 0, -E.EINVAL, -E.EINVAL, 0, -E.EINVAL]


def test_syslog_without_cap_syslog(arch):
    """With the effective set cleared (euid nobody: cap_emulate_setxuid), only READ_ALL and
    SIZE_BUFFER remain, and the permission comes before the arguments (LTP syslog12)."""
    results, _, _ = run_script(arch, [
        ("setresuid", -1, NOBODY, -1), ("syslog", READ, 0, 0), ("syslog", 42, 0, 0),
        ("syslog", CONSOLE_LEVEL, 0, 9), ("syslog", CLEAR, 0, 0), ("syslog", READ_ALL, "BUF", 9),
        ("syslog", SIZE_BUFFER, 0, 0)])
    assert results == [0, -E.EPERM, -E.EPERM, -E.EPERM, -E.EPERM, 0, 1 << 17]


def test_fadvise64_x86_64():
    results, _, _ = run_script("x86_64", [
        ("open", "/f", O_RDONLY), ("fadvise64", 3, 0, 100, DONTNEED),
        ("fadvise64", 3, 2**63 - 1, 0, NOREUSE), ("fadvise64", 3, 0, 2**63, NORMAL),
        ("fadvise64", 3, 0, 0, 6), ("fadvise64", 3, 0, 0, -1), ("fadvise64", 42, 0, 0, 0),
        ("pipe", "BUF"), ("fadvise64", 4, 0, 0, 99), ("fadvise64", 0, 0, 0, 0),
        ("open", "/d", O_RDONLY), ("fadvise64", 6, -5, 1, 0), ("fadvise64", 3, 0, 0, 2**32)])
    assert results == [3, 0, 0, -E.EINVAL, -E.EINVAL, -E.EINVAL, -E.EBADF, 0, -E.ESPIPE,
                       -E.ESPIPE, 6, 0, 0]


def test_fadvise_i386_splits_64_bit_arguments():
    results, _, _ = run_script("i386", [
        ("open", "/f", O_RDONLY),
        # fadvise64(fd, offset_lo, offset_hi, len (u32), advice)
        ("fadvise64", 3, 0, 1, 0xFFFFFFFF, DONTNEED), ("fadvise64", 3, 0, 0, 0, 6),
        # fadvise64_64(fd, offset_lo, offset_hi, len_lo, len_hi, advice)
        ("fadvise64_64", 3, 0, 0, 0, 0x80000000, NORMAL), ("fadvise64_64", 3, 0, 0, 5, 1, NOREUSE),
        ("fadvise64_64", 3, 0, 0, 0, 0, 6), ("fadvise64_64", 9, 0, 0, 0, 0, 0),
        ("pipe", "BUF"), ("fadvise64_64", 5, 0, 0, 0, 0, 0)])
    assert results == [3, 0, -E.EINVAL, -E.EINVAL, 0, -E.EINVAL, -E.EBADF, 0, -E.ESPIPE]
