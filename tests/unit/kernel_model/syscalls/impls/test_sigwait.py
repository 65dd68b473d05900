"""rt_sigtimedwait takes a pending signal of its set (with its siginfo) instead of running its
action, sleeps until one comes or the timeout passes (EAGAIN); rt_sigqueueinfo queues the
caller's siginfo, refusing to forge a kernel or kill() one towards another process (EPERM).
All answered ENOSYS before (LTP sigwait01, sigwaitinfo01, sigtimedwait01, rt_sigqueueinfo01)."""
import struct

import pytest

from kernel_model import errno as E

from ...call_script import run_script

SIGUSR1, SIGALRM = 10, 14
SIG_BLOCK = 0
SI_USER, SI_QUEUE = 0, -1
SET, TIMEOUT, INFO, QUEUED = "BUF", "BUF+16", "BUF+64", "BUF+256"
OWN_PID = 100            # the first process run_script starts


def _data(arch: str, signals, seconds: int) -> bytes:
    word = "<qq" if arch == "x86_64" else "<ii"
    sigset = struct.pack("<Q", sum(1 << (s - 1) for s in signals)).ljust(16, b"\0")
    timeout = struct.pack(word, seconds, 0).ljust(48, b"\0")
    info = bytes(192)
    # a queued siginfo: SIGUSR1, errno 0, SI_QUEUE, pid, uid, then si_value
    value_at = 24 if arch == "x86_64" else 20
    queued = bytearray(struct.pack("<iii", SIGUSR1, 0, SI_QUEUE).ljust(128, b"\0"))
    struct.pack_into("<i", queued, value_at, 4321)
    return sigset + timeout + info + bytes(queued)


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_takes_a_pending_signal_with_its_siginfo(arch):
    results, buf, _ = run_script(arch, [
        ("rt_sigprocmask", SIG_BLOCK, SET, 0, 8),
        ("rt_sigtimedwait", SET, INFO, TIMEOUT, 4),           # sigsetsize must be 8
        ("kill", 0, SIGUSR1),
        ("rt_sigtimedwait", SET, INFO, TIMEOUT, 8),
        ("rt_sigpending", "BUF+512", 8),
    ], data=_data(arch, [SIGUSR1], 0))
    assert results == [0, -E.EINVAL, 0, SIGUSR1, 0]
    signo, _, code = struct.unpack_from("<iii", buf, 64)
    pid = struct.unpack_from("<i", buf, 64 + (16 if arch == "x86_64" else 12))[0]
    assert (signo, code, pid) == (SIGUSR1, SI_USER, OWN_PID)
    assert struct.unpack_from("<Q", buf, 512)[0] == 0          # taken: no longer pending


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_times_out_or_polls_with_eagain(arch):
    results, _, kernel = run_script(arch, [
        ("rt_sigtimedwait", SET, 0, TIMEOUT, 8),               # a zero timeout only polls
        ("clock_gettime", 1, "BUF+128"),
        ("rt_sigtimedwait", SET, 0, "BUF+32", 8),              # two virtual seconds
    ], data=_data(arch, [SIGUSR1], 0)[:32] + struct.pack("<qq" if arch == "x86_64" else "<ii", 2, 0))
    assert results == [-E.EAGAIN, 0, -E.EAGAIN]
    assert kernel.clock.monotonic_ns() >= 2 * 10**9


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_sleeps_until_a_signal_of_its_set_comes(arch):
    # SIGALRM's default action would kill the process: the wait takes it instead
    results, buf, _ = run_script(arch, [
        ("rt_sigprocmask", SIG_BLOCK, SET, 0, 8),
        ("alarm", 1),
        ("rt_sigtimedwait", SET, INFO, 0, 8),                  # no timeout: waits for ever
    ], data=_data(arch, [SIGALRM], 0))
    assert results == [0, 0, SIGALRM]
    assert struct.unpack_from("<i", buf, 64)[0] == SIGALRM


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_sigqueueinfo_carries_the_callers_value(arch):
    value_at = 24 if arch == "x86_64" else 20
    results, buf, _ = run_script(arch, [
        ("rt_sigprocmask", SIG_BLOCK, SET, 0, 8),
        ("rt_sigqueueinfo", OWN_PID, SIGUSR1, QUEUED),
        ("rt_sigtimedwait", SET, INFO, TIMEOUT, 8),
        ("rt_sigqueueinfo", OWN_PID + 1, SIGUSR1, QUEUED),    # SI_QUEUE elsewhere: no such pid
    ], data=_data(arch, [SIGUSR1], 0))
    assert results == [0, 0, SIGUSR1, -E.ESRCH]
    assert struct.unpack_from("<iii", buf, 64) == (SIGUSR1, 0, SI_QUEUE)
    assert struct.unpack_from("<i", buf, 64 + value_at)[0] == 4321


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_sigqueueinfo_may_not_forge_a_kill_for_another_process(arch):
    data = bytearray(_data(arch, [SIGUSR1], 0))
    struct.pack_into("<i", data, 256 + 8, SI_USER)
    results, _, _ = run_script(arch, [
        ("rt_sigqueueinfo", OWN_PID + 1, SIGUSR1, QUEUED),
        ("rt_tgsigqueueinfo", OWN_PID, OWN_PID + 7, SIGUSR1, QUEUED),
        ("rt_sigqueueinfo", OWN_PID, 99, QUEUED),
    ], data=bytes(data))
    assert results == [-E.EPERM, -E.EPERM, -E.EINVAL]
