"""ITIMER_VIRTUAL and ITIMER_PROF (setitimer answered EINVAL for them: LTP getitimer01,
setitimer01-02): they keep their value and interval, expire with SIGVTALRM and SIGPROF, and
setitimer reads the new value and arms the timer before it writes the old one (EFAULT then)."""
import struct

import pytest

from kernel_model import errno as E

from ..call_script import run_script

ITIMER_VIRTUAL, ITIMER_PROF = 1, 2
SIGVTALRM, SIGPROF, SIG_BLOCK = 26, 27, 0


def _itimerval(arch: str, interval_us: int, value_us: int) -> bytes:
    fmt = "<qqqq" if arch == "x86_64" else "<iiii"
    return struct.pack(fmt, *divmod(interval_us, 10**6), *divmod(value_us, 10**6))


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
@pytest.mark.parametrize("which,sig", [(ITIMER_VIRTUAL, SIGVTALRM), (ITIMER_PROF, SIGPROF)])
def test_cpu_timers_keep_their_setting_and_expire_with_their_signal(arch, which, sig):
    data = _itimerval(arch, 10_000, 500_000).ljust(64, b"\0") + struct.pack("<Q", 1 << (sig - 1))
    results, buf, _ = run_script(arch, [
        ("setitimer", which, "BUF", "RO"),                 # armed, then EFAULT for the old one
        ("getitimer", which, "BUF+128"),
        ("rt_sigprocmask", SIG_BLOCK, "BUF+64", 0, 8),
        ("rt_sigtimedwait", "BUF+64", 0, 0, 8),
        ("setitimer", which, 0, "BUF+160"),                # (no new value: disarms)
        ("getitimer", which, "BUF+192"),
        ("getitimer", 3, "BUF+192"),
    ], data=data)
    assert results == [-E.EFAULT, 0, 0, sig, 0, 0, -E.EINVAL]
    fmt = "<qqqq" if arch == "x86_64" else "<iiii"
    interval_s, interval_us, value_s, value_us = struct.unpack_from(fmt, buf, 128)
    assert (interval_s, interval_us) == (0, 10_000) and 0 < value_s * 10**6 + value_us <= 500_000
    assert struct.unpack_from(fmt, buf, 160)[:2] == (0, 10_000)        # the periodic timer it was
    assert struct.unpack_from(fmt, buf, 192) == (0, 0, 0, 0)
