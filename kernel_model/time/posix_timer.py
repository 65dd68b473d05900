"""One POSIX per-process timer (timer_create's k_itimer, include/linux/posix-timers.h) and the
siginfo its signal carries. Its own module: the scheduler's view of every timer
(posix_timers.py) is made by every run, a timer only by programs that call timer_create, so
this dataclass and the signal frame's module it reads SIGINFO_SIZE from come with the first
timer (issue 31, start-up).
"""
import struct
from dataclasses import dataclass

from ..signals.frame import SIGINFO_SIZE

SI_TIMER = -2            # include/uapi/asm-generic/siginfo.h: sent by a POSIX timer


@dataclass
class PosixTimer:
    clock: int
    notify: int                  # SIGEV_SIGNAL, SIGEV_NONE or SIGEV_THREAD_ID (| SIGEV_SIGNAL)
    signo: int
    value: int                   # sigev_value: what si_value will carry
    thread: object = None        # the target thread of SIGEV_THREAD_ID
    deadline: int | None = None  # CLOCK_MONOTONIC virtual ns; None: disarmed (or parked)
    interval: int = 0
    overrun_last: int = 0        # what timer_getoverrun says: the delivered signal's overrun
    armed: int = 0               # bumped by every timer_settime: a parked expiry of an
    parked: tuple | None = None  # earlier setting is not re-armed; (expiry, setting) meanwhile


def timer_siginfo(word: int, timer_id: int, timer: PosixTimer, overrun: int) -> bytes:
    """siginfo_t of a timer's signal: si_tid, si_overrun, si_value after the header."""
    head = struct.pack("<iii", timer.signo, 0, SI_TIMER) + (b"\0" * 4 if word == 8 else b"")
    value = struct.pack("<Q" if word == 8 else "<I", timer.value & ((1 << (8 * word)) - 1))
    return (head + struct.pack("<ii", timer_id, overrun) + value).ljust(SIGINFO_SIZE, b"\0")
