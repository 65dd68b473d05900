"""i386's two getrlimit calls (issue 32, LTP getrlimit03 on i386: 12 of 32 checks failed).
Number 76 is the old getrlimit of signed longs (kernel/sys.c compat_sys_old_getrlimit): a
limit past 0x7FFFFFFF, RLIM_INFINITY included, reads 0x7FFFFFFF; ugetrlimit (191) is
unsigned and reads COMPAT_RLIM_INFINITY, 0xFFFFFFFF; prlimit64 gives the 64-bit values.
x86-64's getrlimit is the unsigned 64-bit one."""
import struct

from ...call_script import run_script

RLIMIT_STACK, RLIMIT_CPU = 3, 0
INFINITY = (1 << 64) - 1


def test_old_getrlimit_reads_long_max_and_ugetrlimit_the_compat_infinity():
    results, buf, _ = run_script("i386", [
        ("getrlimit", RLIMIT_STACK, "BUF"), ("ugetrlimit", RLIMIT_STACK, "BUF+8"),
        ("getrlimit", RLIMIT_CPU, "BUF+16"), ("ugetrlimit", RLIMIT_CPU, "BUF+24"),
        ("prlimit64", 0, RLIMIT_CPU, 0, "BUF+32")])
    assert results == [0] * 5
    assert struct.unpack_from("<8I", buf) == (8 << 20, 0x7FFFFFFF, 8 << 20, 0xFFFFFFFF,
                                              0x7FFFFFFF, 0x7FFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF)
    assert struct.unpack_from("<QQ", buf, 32) == (INFINITY, INFINITY)


def test_x86_64_getrlimit_is_unsigned_64_bits():
    results, buf, _ = run_script("x86_64", [("getrlimit", RLIMIT_CPU, "BUF")])
    assert results == [0] and struct.unpack_from("<QQ", buf) == (INFINITY, INFINITY)
