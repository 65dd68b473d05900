"""strace's decoding of the waiting calls (trapline/strace/waits.py): the set rt_sigtimedwait
waits for (its size is the fourth argument), a sleep's time left only when the kernel wrote it
(interrupted), pselect6's {sigmask, sigsetsize} pair and a wait's `(Timeout)`. Expected texts
are Debian's strace 6.1 output for the same calls."""
import struct

from trapline.strace.syscall_line import format_syscall
from tests.unit.trapline.strace.fake_memory import FakeMemory

SIGSET, TIME, PAIR = 0x1800, 0x1900, 0x1a00
EAGAIN, EINTR, ERESTART_RESTARTBLOCK = 11, 4, 516


def _memory(bits: int) -> FakeMemory:
    mem = FakeMemory()
    mem.put(SIGSET, struct.pack("<Q", 1 << 9))            # SIGUSR1 (10)
    mem.put(TIME, struct.pack("<qq" if bits == 64 else "<ii", 0, 60434268))
    mem.put(PAIR, struct.pack("<QQ" if bits == 64 else "<II", SIGSET, 8))
    return mem


def _line(name, args, ret, bits=64):
    return format_syscall(name, args, ret, _memory(bits), bits)


def test_the_set_rt_sigtimedwait_waits_for():
    assert _line("rt_sigtimedwait", [SIGSET, 0, TIME, 8], -EAGAIN) == \
        "rt_sigtimedwait([USR1], NULL, {tv_sec=0, tv_nsec=60434268}, 8) = -1 EAGAIN " \
        "(Resource temporarily unavailable)"


def test_a_sleep_s_time_left_is_shown_when_the_kernel_wrote_it():
    for bits in (64, 32):
        assert _line("clock_nanosleep", [0, 0, TIME, TIME], -ERESTART_RESTARTBLOCK, bits) == \
            "clock_nanosleep(CLOCK_REALTIME, 0, {tv_sec=0, tv_nsec=60434268}, " \
            "{tv_sec=0, tv_nsec=60434268}) = ? ERESTART_RESTARTBLOCK (Interrupted by signal)"
    assert _line("nanosleep", [TIME, TIME], 0) == \
        f"nanosleep({{tv_sec=0, tv_nsec=60434268}}, {TIME:#x}) = 0"


def test_pselect6_s_mask_pair_and_a_timeout():
    assert _line("pselect6", [0, 0, 0, 0, TIME, PAIR], 0) == \
        "pselect6(0, NULL, NULL, NULL, {tv_sec=0, tv_nsec=60434268}, " \
        "{sigmask=[USR1], sigsetsize=8}) = 0 (Timeout)"
    assert _line("ppoll", [0, 0, TIME, 0, 8], 0, 32) == \
        "ppoll(NULL, 0, {tv_sec=0, tv_nsec=60434268}, NULL, 8) = 0 (Timeout)"
