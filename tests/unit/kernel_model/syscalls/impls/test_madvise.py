"""madvise's checks in mm/madvise.c's order (LTP madvise02: every one of its error cases
succeeded): unknown advice and an unaligned start are EINVAL, a hole ENOMEM after the walk,
and each advice refuses the areas Linux refuses it."""
import pytest

from kernel_model import errno as E

from ...call_script import run_script

PROT_RW = 3
MAP_PRIVATE_ANON, MAP_SHARED_ANON, MAP_FIXED = 0x22, 0x21, 0x10
MADV_DONTNEED, MADV_FREE, MADV_REMOVE, MADV_MERGEABLE = 4, 8, 9, 12
MADV_WIPEONFORK, MADV_KEEPONFORK, MADV_NORMAL = 18, 19, 0
ANON, SHARED, FILE = 0x0710_0000, 0x0720_0000, 0x0730_0000


def _mmap(arch):
    return "mmap2" if arch == "i386" else "mmap"


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_checks_in_linux_order(arch):
    results, _, _ = run_script(arch, [
        (_mmap(arch), ANON, 0x2000, PROT_RW, MAP_PRIVATE_ANON | MAP_FIXED, -1, 0),
        (_mmap(arch), SHARED, 0x1000, PROT_RW, MAP_SHARED_ANON | MAP_FIXED, -1, 0),
        ("openat", -100, "/f", 0, 0),
        (_mmap(arch), FILE, 0x1000, 1, 0x02 | MAP_FIXED, 3, 0),
        ("madvise", ANON + 100, 0x1000, MADV_NORMAL),           # unaligned
        ("madvise", ANON, 0x1000, 1212),                        # unknown advice
        ("madvise", ANON, 0x1000, MADV_MERGEABLE),              # KSM is not configured
        ("madvise", ANON, 0, MADV_NORMAL),                      # an empty range
        ("madvise", ANON, 0x4000, MADV_NORMAL),                 # past the area: a hole
        ("madvise", FILE, 0x1000, MADV_FREE),                   # FREE: anonymous memory only
        ("madvise", SHARED, 0x1000, MADV_WIPEONFORK),           # private anonymous only
        ("madvise", FILE, 0x1000, MADV_WIPEONFORK),
        ("madvise", ANON, 0x2000, MADV_WIPEONFORK),
        ("madvise", ANON, 0x2000, MADV_KEEPONFORK),
        ("madvise", ANON, 0x1000, MADV_REMOVE),                 # no file behind it
        ("madvise", FILE, 0x1000, MADV_REMOVE),                 # not shared and writable
        ("mlock", ANON, 0x1000),
        ("madvise", ANON, 0x2000, MADV_DONTNEED),               # locked: EINVAL
        ("munlock", ANON, 0x1000),
        ("madvise", ANON, 0x2000, MADV_DONTNEED)])
    assert results[4:] == [-E.EINVAL, -E.EINVAL, -E.EINVAL, 0, -E.ENOMEM, -E.EINVAL, -E.EINVAL,
                           -E.EINVAL, 0, 0, -E.EINVAL, -E.EACCES, 0, -E.EINVAL, 0, 0]


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_dontneed_zeroes_private_anonymous_pages(arch):
    results, buf, _ = run_script(arch, [
        (_mmap(arch), ANON, 0x1000, PROT_RW, MAP_PRIVATE_ANON | MAP_FIXED, -1, 0),
        ("openat", -100, "/f", 0, 0),
        ("read", 3, ANON, 6),
        ("madvise", ANON, 0x1000, MADV_DONTNEED),
        ("pipe", "BUF+512"),
        ("write", 5, ANON, 6),
        ("read", 4, "BUF", 6)], data=b"\xff" * 6)
    assert results[2:] == [6, 0, 0, 6, 6] and buf[:6] == bytes(6)
