"""timerfd (ENOSYS before; LTP timerfd01-02, timerfd_create01, timerfd_gettime01,
timerfd_settime01): a read takes the expirations since the last one, EAGAIN without any under
O_NONBLOCK, or sleeps until the next; gettime says the interval and what is left; a file that
is not a timerfd, a bad clock or flag is EINVAL."""
import struct

import pytest

from kernel_model import errno as E

from ...call_script import run_script

CLOCK_MONOTONIC, TFD_NONBLOCK = 1, 0o4000
SPEC, SLEEP, TICKS, NOW = 0, 64, 96, 128


def _data(arch: str) -> bytes:
    fmt = "<qqqq" if arch == "x86_64" else "<iiii"
    data = bytearray(256)
    struct.pack_into(fmt, data, SPEC, 1, 0, 1, 0)                  # every second, from 1 s
    struct.pack_into(fmt[:3], data, SLEEP, 2, 500_000_000)          # 2.5 s
    return bytes(data)


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_a_read_takes_the_expirations_since_the_last(arch):
    results, buf, _ = run_script(arch, [
        ("timerfd_create", CLOCK_MONOTONIC, TFD_NONBLOCK),
        ("read", 3, f"BUF+{TICKS}", 8),                            # not armed: nothing yet
        ("timerfd_settime", 3, 0, f"BUF+{SPEC}", 0),
        ("nanosleep", f"BUF+{SLEEP}", 0),                          # 1 s and 2 s expire
        ("read", 3, f"BUF+{TICKS}", 4),                            # a u64 does not fit
        ("read", 3, f"BUF+{TICKS}", 8),
        ("timerfd_gettime", 3, f"BUF+{NOW}"),
        ("timerfd_create", CLOCK_MONOTONIC, 0),
        ("timerfd_settime", 4, 0, f"BUF+{SPEC}", 0),
        ("read", 4, f"BUF+{TICKS + 8}", 8),                        # sleeps until 1 s
    ], data=_data(arch))
    assert results == [3, -E.EAGAIN, 0, 0, -E.EINVAL, 8, 0, 4, 0, 8]
    assert struct.unpack_from("<QQ", buf, TICKS) == (2, 1)
    fmt = "<qqqq" if arch == "x86_64" else "<iiii"
    interval_s, interval_ns, left_s, left_ns = struct.unpack_from(fmt, buf, NOW)
    assert (interval_s, interval_ns, left_s) == (1, 0, 0) and 0 < left_ns <= 500_000_000


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_bad_clocks_flags_and_files_are_einval(arch):
    results, _, _ = run_script(arch, [
        ("timerfd_create", 99, 0),
        ("timerfd_create", CLOCK_MONOTONIC, 0x1),
        ("timerfd_settime", 0, 0, f"BUF+{SPEC}", 0),               # stdin is no timerfd
        ("timerfd_settime", 77, 0, f"BUF+{SPEC}", 0),
        ("timerfd_create", CLOCK_MONOTONIC, 0),
        ("timerfd_settime", 3, 0x10, f"BUF+{SPEC}", 0),
    ], data=_data(arch))
    assert results == [-E.EINVAL, -E.EINVAL, -E.EINVAL, -E.EBADF, 3, -E.EINVAL]
