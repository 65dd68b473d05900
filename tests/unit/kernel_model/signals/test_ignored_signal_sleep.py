"""An ignored signal does not touch a sleeping call: Linux does not even queue it (sig_ignored),
so a nanosleep keeps its deadline. It restarted its timeout before (2 s asked, 3 s slept with
an ignored SIGALRM at 1 s; LTP rt_sigtimedwait01's 1 s wait never ended under an ignored
SIGUSR2 every 100 ms, or returned EINTR)."""
import struct

import pytest

from ..call_script import run_script

SIGALRM, SIG_IGN, CLOCK_MONOTONIC = 14, 1, 1


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_a_sleep_keeps_its_deadline_through_an_ignored_signal(arch):
    word = "<qq" if arch == "x86_64" else "<ii"
    act = struct.pack("<QQQQ" if arch == "x86_64" else "<IIIQ", SIG_IGN, 0, 0, 0)
    data = struct.pack(word, 2, 0).ljust(16, b"\0") + act.ljust(48, b"\0")
    results, buf, _ = run_script(arch, [
        ("rt_sigaction", SIGALRM, "BUF+16", 0, 8),
        ("alarm", 1),
        ("clock_gettime", CLOCK_MONOTONIC, "BUF+64"),
        ("nanosleep", "BUF", 0),
        ("clock_gettime", CLOCK_MONOTONIC, "BUF+96"),
    ], data=data)
    assert results == [0, 0, 0, 0, 0]
    before, after = (struct.unpack_from(word, buf, at) for at in (64, 96))
    slept = (after[0] - before[0]) * 10**9 + after[1] - before[1]
    assert 2 * 10**9 <= slept < 2 * 10**9 + 10**6
