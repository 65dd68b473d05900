"""RLIMIT_CPU (issue 32, LTP setrlimit06 timed out: the limit was kept but never enforced):
kernel/time/posix-cpu-timers.c check_process_timers. At the soft limit the process gets
SIGXCPU and the soft limit goes one second up (every second another SIGXCPU); at the hard
limit SIGKILL. The script blocks SIGXCPU and waits for it: the model's CPU limit counts the
clock's advance, as its CPU interval timers do (itimer.py), so a waiting process reaches it
too."""
import struct

import pytest

from ..call_script import run_script

RLIMIT_CPU, SIGXCPU, SIG_BLOCK = 0, 24, 0


def _limits(soft: int, hard: int) -> bytes:
    sigset = struct.pack("<Q", 1 << (SIGXCPU - 1))
    return struct.pack("<QQ", soft, hard) + sigset


def _wait_script(waits: int) -> list:
    calls = [("rt_sigprocmask", SIG_BLOCK, "BUF+16", 0, 8),
             ("prlimit64", 0, RLIMIT_CPU, "BUF", 0)]
    for n in range(waits):
        calls += [("rt_sigtimedwait", "BUF+16", 0, 0, 8),
                  ("prlimit64", 0, RLIMIT_CPU, 0, f"BUF+{64 + 16 * n}")]
    return calls


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_sigxcpu_every_second_from_the_soft_limit_to_the_hard_one(arch):
    results, buf, _ = run_script(arch, _wait_script(2), data=_limits(1, 3))
    assert results == [0, 0, SIGXCPU, 0, SIGXCPU, 0]
    assert struct.unpack_from("<QQ", buf, 64) == (2, 3)       # raised by a second each time
    assert struct.unpack_from("<QQ", buf, 80) == (3, 3)


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_the_hard_limit_kills(arch):
    """soft == hard: no SIGXCPU, SIGKILL (the script never reaches its output: status 9)."""
    with pytest.raises(AssertionError, match="status 0x9:"):
        run_script(arch, _wait_script(1), data=_limits(1, 1))


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_after_sigxcpu_the_hard_limit_kills(arch):
    with pytest.raises(AssertionError, match="status 0x9:"):
        run_script(arch, _wait_script(2), data=_limits(1, 2))
