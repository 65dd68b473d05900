"""POSIX timers (timer_create and its family; all answered ENOSYS before, LTP timer_*): a
periodic timer's signal carries SI_TIMER, its sigev_value (the id by default) and the periods
it missed while its signal was pending, which timer_getoverrun also reports; it re-arms when
its signal is taken; bad ids, clocks and sigevents are EINVAL."""
import struct

import pytest

from kernel_model import errno as E

from ...call_script import run_script

CLOCK_MONOTONIC, SIGALRM, SIG_BLOCK, SI_TIMER = 1, 14, 0, -2
ID, SET, SPEC, SLEEP, INFO1, INFO2, NOW, EVENT = 0, 16, 32, 64, 96, 224, 352, 384
SIGEV_SIGNAL, SIGEV_BOGUS = 0, 3


def _layout(arch: str) -> bytes:
    word = "<q" if arch == "x86_64" else "<i"
    data = bytearray(512)
    struct.pack_into("<Q", data, SET, 1 << (SIGALRM - 1))
    struct.pack_into(word[0] + word[1] * 4, data, SPEC, 1, 0, 1, 0)          # every second, from 1 s
    struct.pack_into(word[0] + word[1] * 2, data, SLEEP, 3, 500_000_000)     # 3.5 s
    struct.pack_into("<iii" if arch == "i386" else "<Qii", data, EVENT, 0, SIGALRM, SIGEV_BOGUS)
    return bytes(data)


def _overrun(arch: str, buf: bytes, at: int) -> tuple:
    """(si_signo, si_code, si_timerid, si_overrun, si_value) of the siginfo at `at`."""
    signo, _, code = struct.unpack_from("<iii", buf, at)
    body = at + (16 if arch == "x86_64" else 12)
    timer_id, overrun = struct.unpack_from("<ii", buf, body)
    value = struct.unpack_from("<Q" if arch == "x86_64" else "<I", buf, body + 8)[0]
    return signo, code, timer_id, overrun, value


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_a_periodic_timer_counts_the_periods_its_pending_signal_missed(arch):
    p = lambda at: f"BUF+{at}"                                   # noqa: E731
    results, buf, _ = run_script(arch, [
        ("timer_create", CLOCK_MONOTONIC, 0, p(ID)),
        ("rt_sigprocmask", SIG_BLOCK, p(SET), 0, 8),
        ("timer_settime", 0, 0, p(SPEC), 0),
        ("rt_sigtimedwait", p(SET), p(INFO1), 0, 8),             # at 1 s: re-armed for 2 s
        ("nanosleep", p(SLEEP), 0),                              # to 4.5 s: 2 s queued, 3 s and 4 s missed
        ("rt_sigtimedwait", p(SET), p(INFO2), 0, 8),
        ("timer_getoverrun", 0),
        ("timer_gettime", 0, p(NOW)),
        ("timer_delete", 0),
        ("timer_delete", 0),
        ("timer_getoverrun", 0),
    ], data=_layout(arch))
    assert results == [0, 0, 0, SIGALRM, 0, SIGALRM, 2, 0, 0, -E.EINVAL, -E.EINVAL]
    assert struct.unpack_from("<i", buf, ID)[0] == 0
    assert _overrun(arch, buf, INFO1) == (SIGALRM, SI_TIMER, 0, 0, 0)
    assert _overrun(arch, buf, INFO2) == (SIGALRM, SI_TIMER, 0, 2, 0)
    interval_s, interval_ns, left_s, left_ns = struct.unpack_from(
        "<qqqq" if arch == "x86_64" else "<iiii", buf, NOW)
    assert (interval_s, interval_ns) == (1, 0)
    assert left_s == 0 and 0 < left_ns <= 500_000_000          # the next period: at 5 s


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_bad_clocks_sigevents_and_settings_are_einval(arch):
    bad_spec = struct.pack("<qqqq" if arch == "x86_64" else "<iiii", 0, 0, 0, 10**9)
    data = bytearray(_layout(arch))
    data[SPEC:SPEC + len(bad_spec)] = bad_spec
    results, _, _ = run_script(arch, [
        ("timer_create", 99, 0, "BUF"),
        ("timer_create", CLOCK_MONOTONIC, f"BUF+{EVENT}", "BUF"),  # sigev_notify 3
        ("timer_create", CLOCK_MONOTONIC, 0, "RO"),               # the id cannot be written
        ("timer_create", CLOCK_MONOTONIC, 0, "BUF"),
        ("timer_settime", 0, 0, 0, 0),                            # no new value
        ("timer_settime", 0, 0, f"BUF+{SPEC}", 0),                # tv_nsec of a second
        ("timer_settime", 7, 0, f"BUF+{SLEEP}", 0),               # no such timer
    ], data=bytes(data))
    assert results == [-E.EINVAL, -E.EINVAL, -E.EFAULT, 0, -E.EINVAL, -E.EINVAL, -E.EINVAL]
