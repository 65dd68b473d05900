"""RLIMIT_SIGPENDING refuses a real-time signal sent with a siginfo of its own once the user's
queue is full: tgkill and rt_sigqueueinfo fail with EAGAIN (kernel/signal.c
__send_signal_locked, "queue overflow, abort"; LTP tgkill02), while classic signals and kill()'s
SI_USER are still sent without their siginfo. Checked natively: after
setrlimit(RLIMIT_SIGPENDING, {0, 0}) with SIGRTMIN blocked, tgkill(getpid(), gettid(), SIGRTMIN)
and sigqueue() fail with EAGAIN, tgkill(..., SIGUSR1) and kill(getpid(), SIGRTMIN) succeed."""
import struct

import pytest

from kernel_model import errno as E

from ...call_script import run_script

OWN_PID = 100
RLIMIT_SIGPENDING, SIG_BLOCK, SI_QUEUE = 11, 0, -1
SIGUSR1, SIGRTMIN = 10, 32


def _data() -> bytes:
    blocked = (1 << (SIGUSR1 - 1)) | (1 << (SIGRTMIN - 1)) | (1 << SIGRTMIN)
    rlimit = struct.pack("<QQ", 0, 0)                    # prlimit64: two u64 on both ABIs
    siginfo = struct.pack("<iii", SIGRTMIN + 1, 0, SI_QUEUE).ljust(128, b"\0")
    return rlimit + struct.pack("<Q", blocked) + b"\0" * 8 + siginfo


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_a_full_signal_queue_refuses_real_time_signals_with_their_siginfo(arch):
    results, _, _ = run_script(arch, [
        ("rt_sigprocmask", SIG_BLOCK, "BUF+16", 0, 8),
        ("tgkill", OWN_PID, OWN_PID, SIGRTMIN),              # room left: queued
        ("prlimit64", 0, RLIMIT_SIGPENDING, "BUF", 0),
        ("tgkill", OWN_PID, OWN_PID, SIGRTMIN + 1),          # full: EAGAIN
        ("rt_sigqueueinfo", OWN_PID, SIGRTMIN + 1, "BUF+32"),
        ("rt_tgsigqueueinfo", OWN_PID, OWN_PID, SIGRTMIN + 1, "BUF+32"),
        ("tgkill", OWN_PID, OWN_PID, SIGUSR1),               # classic: sent without siginfo
        ("kill", OWN_PID, SIGRTMIN + 1),                     # SI_USER: sent without siginfo
        ("tgkill", OWN_PID, OWN_PID, 0),                     # no signal, nothing queued
    ], data=_data())
    assert results == [0, 0, 0, -E.EAGAIN, -E.EAGAIN, -E.EAGAIN, 0, 0, 0]
