"""Setting clocks is EPERM for the sandbox's root (no CAP_SYS_TIME), after the checks Linux
makes first; reading the NTP state through adjtimex/clock_adjtime is allowed."""
import struct

import pytest

from kernel_model import errno as E

from ...call_script import run_script

REALTIME, MONOTONIC, PROCESS_CPUTIME, TAI = 0, 1, 2, 11
TIME_ERROR, STA_UNSYNC = 5, 0x40
KERNEL_TIMEX = "<I4xqqqqi4xqqqqqqqqi4xqqqqqi44x"
OLD_TIMEX32 = "<Iiiiiiiiiiiiiiiiiiiii44x"


def timespec(arch: str, sec: int, nsec: int, wide: bool = False) -> bytes:
    return struct.pack("<qq" if wide or arch == "x86_64" else "<ii", sec, nsec)


def cpu_clock(pid: int, which: int = 0, thread: bool = False) -> int:
    """MAKE_PROCESS_CPUCLOCK / MAKE_THREAD_CPUCLOCK."""
    return ((~pid) << 3) | (4 if thread else 0) | which


def test_clock_settime(arch):
    results, _, _ = run_script(arch, [
        ("clock_settime", REALTIME, "BUF"), ("clock_settime", REALTIME, "BUF+32"),
        ("clock_settime", MONOTONIC, "BUF"), ("clock_settime", TAI, 0),
        ("clock_settime", 10, "BUF"), ("clock_settime", 12, "BUF"),
        ("clock_settime", REALTIME, 0x10), ("clock_settime", PROCESS_CPUTIME, "BUF"),
        ("clock_settime", cpu_clock(0), "BUF"), ("clock_settime", cpu_clock(4242), "BUF"),
        ("clock_settime", cpu_clock(0, which=3), "BUF"), ("clock_settime", -5, "BUF")],
        data=timespec(arch, 1_700_000_000, 5).ljust(32, b"\0") + timespec(arch, 1, 10**9))
    assert results == [-E.EPERM, -E.EINVAL, -E.EINVAL, -E.EINVAL, -E.EINVAL, -E.EINVAL,
                       -E.EFAULT, -E.EINVAL, -E.EPERM, -E.EINVAL, -E.EINVAL, -E.EINVAL]


def test_i386_clock_settime64_reads_64_bit_seconds_and_the_low_half_of_nsec():
    data = timespec("i386", 2**32 + 5, 0, wide=True) + struct.pack("<qQ", 1, (7 << 32) | 5) \
        + struct.pack("<qq", -1, 0)
    results, _, _ = run_script("i386", [
        ("clock_settime64", REALTIME, "BUF"), ("clock_settime64", REALTIME, "BUF+16"),
        ("clock_settime64", REALTIME, "BUF+32")], data=data)
    assert results == [-E.EPERM, -E.EPERM, -E.EINVAL]


def test_settimeofday_and_stime(arch):
    tv = "<qq" if arch == "x86_64" else "<ii"
    data = struct.pack(tv, 5, 10**6 + 1).ljust(32, b"\0") + struct.pack(tv, 5, 7)
    calls = [("settimeofday", 0, 0), ("settimeofday", "BUF+32", 0),
             ("settimeofday", "BUF", 0), ("settimeofday", "BUF+32", 0x10)]
    expected = [-E.EPERM, -E.EPERM, -E.EINVAL, -E.EFAULT]
    if arch == "i386":
        calls += [("stime", "BUF"), ("stime", 0x10)]
        expected += [-E.EPERM, -E.EFAULT]
    assert run_script(arch, calls, data=data)[0] == expected


@pytest.mark.parametrize("call", ["adjtimex", "clock_adjtime"])
def test_reading_the_ntp_state(arch, call):
    compat = arch == "i386"
    fmt = struct.Struct(OLD_TIMEX32 if compat else KERNEL_TIMEX)
    prefix = ((call, REALTIME) if call == "clock_adjtime" else (call,))
    results, buf, kernel = run_script(arch, [
        (*prefix, "BUF"), (*prefix, "BUF+256"), (*prefix, "BUF+512"), (*prefix, "RO"),
        (*prefix, 0x10)],
        data=bytes(256) + struct.pack("<I", 1) + bytes(252) + struct.pack("<I", 0xA001))
    # the read-only page holds "AAAA": modes that would set something, EPERM before the copy out
    assert results == [TIME_ERROR, -E.EPERM, TIME_ERROR, -E.EPERM, -E.EFAULT]
    fields = fmt.unpack_from(buf, 0)
    (modes, offset, freq, maxerror, esterror, status, constant, precision, tolerance, sec, usec,
     tick, *rest) = fields
    assert (modes, offset, freq, status, constant, precision) == (0, 0, 0, STA_UNSYNC, 2, 1)
    assert maxerror == esterror == 16_000_000 and tolerance == 500 << 16 and tick == 10_000
    assert rest == [0] * 9 and 0 <= usec < 10**6
    assert sec == kernel.clock.realtime_ns() // 10**9 or sec == kernel.clock.realtime_ns() // 10**9 - 1
    assert fmt.unpack_from(buf, 512)[0] == 0xA001          # read-only adjtime keeps its modes


def test_clock_adjtime_of_other_clocks(arch):
    results, _, _ = run_script(arch, [
        ("clock_adjtime", MONOTONIC, "BUF"), ("clock_adjtime", 12, "BUF"),
        ("clock_adjtime", cpu_clock(0), "BUF"), ("clock_adjtime", -5, "BUF"),
        ("clock_adjtime", MONOTONIC, 0x10)])
    assert results == [-E.EOPNOTSUPP, -E.EINVAL, -E.EOPNOTSUPP, -E.EINVAL, -E.EFAULT]


def test_i386_clock_adjtime64_uses_the_64_bit_struct():
    results, buf, _ = run_script("i386", [("clock_adjtime64", REALTIME, "BUF")])
    assert results == [TIME_ERROR]
    assert struct.unpack_from(KERNEL_TIMEX, buf)[5] == STA_UNSYNC
