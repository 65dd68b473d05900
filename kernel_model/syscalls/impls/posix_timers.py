"""timer_create, timer_settime, timer_gettime, timer_getoverrun, timer_delete (and i386's
_time64 forms): the calls of kernel/time/posix-timers.c over time/posix_timers.py.

Every clock runs on the virtual clock (timecalls.py clock_ns); a timer's deadline is kept on
CLOCK_MONOTONIC, an absolute time on another clock (TIMER_ABSTIME) being converted at
timer_settime (CLOCK_REALTIME is not set during a run, so the two never drift apart)."""
import struct

from ... import errno as E
from ...errno import GuestErrno
from ...signals import NSIG
from ...time.posix_timer import PosixTimer
from ...time.posix_timers import SIGEV_NONE, SIGEV_SIGNAL, SIGEV_THREAD, SIGEV_THREAD_ID
from ..kinds import K
from ..registry import syscall
from .kill import _thread
from .timecalls import TIMER_ABSTIME, clock_ns

SIGALRM = 14
# clocks a timer may use (posix_timer_create: clockid_to_kclock; the CPU-time clocks of
# other processes, negative ids, are not modeled)
TIMER_CLOCKS = frozenset({0, 1, 2, 3, 7, 8, 9, 11})
MAX_TIMERS = 1 << 16            # a process's timers, far below Linux's INT_MAX ids


def _timer(ctx, timer_id: int) -> PosixTimer:
    timer = ctx.proc.posix_timers.get(ctx.int32(timer_id))
    if timer is None:
        raise GuestErrno(E.EINVAL)
    return timer


@syscall("timer_create", args=(("clockid", K.CLOCK), ("sevp", K.STRUCT), ("timerid", K.PTR)))
def sys_timer_create(ctx, clock_id, sevp, timerid_ptr):
    clock = ctx.int32(clock_id)
    if clock not in TIMER_CLOCKS:
        raise GuestErrno(E.EINVAL)
    timer = _sigevent(ctx, clock, sevp)
    timers = ctx.proc.posix_timers
    timer_id = next(i for i in range(MAX_TIMERS + 1) if i not in timers)
    if timer_id == MAX_TIMERS:
        raise GuestErrno(E.EAGAIN)
    if sevp == 0:
        timer.value = timer_id                 # the default sigevent: si_value is the id
    ctx.write(timerid_ptr, struct.pack("<i", timer_id))      # EFAULT before it exists
    timers[timer_id] = timer
    return 0


def _sigevent(ctx, clock: int, sevp: int) -> PosixTimer:
    """struct sigevent: sigev_value (a word), sigev_signo, sigev_notify, then _tid."""
    if sevp == 0:
        return PosixTimer(clock, SIGEV_SIGNAL, SIGALRM, 0)
    fmt = "<Qiii" if ctx.word == 8 else "<Iiii"
    value, signo, notify, tid = struct.unpack(fmt, ctx.read(sevp, struct.calcsize(fmt)))
    thread = None
    # good_sigevent: SIGEV_THREAD is libc's (it reaches the kernel as SIGEV_THREAD_ID)
    if notify & ~SIGEV_THREAD_ID not in (SIGEV_SIGNAL, SIGEV_NONE, SIGEV_THREAD) or \
            notify & SIGEV_THREAD_ID and notify != SIGEV_THREAD_ID | SIGEV_SIGNAL:
        raise GuestErrno(E.EINVAL)
    if notify & SIGEV_THREAD_ID:
        try:
            thread = _thread(ctx, tid, ctx.proc.pid)
        except GuestErrno:
            raise GuestErrno(E.EINVAL) from None
    if notify != SIGEV_NONE and not 1 <= signo <= NSIG:
        raise GuestErrno(E.EINVAL)
    return PosixTimer(clock, notify, signo, value, thread)


def _itimerspec_format(ctx, time64: bool) -> str:
    return "<qqqq" if time64 or ctx.word == 8 else "<iiii"


@syscall("timer_settime", args=(("timerid", K.INT), ("flags", K.TIMER_FLAGS),
                                ("new_value", K.STRUCT), ("old_value", K.STRUCT)))
def sys_timer_settime(ctx, timer_id, flags, new, old):
    return _settime(ctx, timer_id, flags, new, old, time64=False)


@syscall("timer_settime64", args=(("timerid", K.INT), ("flags", K.TIMER_FLAGS),
                                  ("new_value", K.STRUCT), ("old_value", K.STRUCT)))
def sys_timer_settime64(ctx, timer_id, flags, new, old):
    return _settime(ctx, timer_id, flags, new, old, time64=True)


def _settime(ctx, timer_id, flags, new, old, *, time64: bool) -> int:
    fmt = _itimerspec_format(ctx, time64)
    if new == 0:
        raise GuestErrno(E.EINVAL)
    i_sec, i_nsec, v_sec, v_nsec = struct.unpack(fmt, ctx.read(new, struct.calcsize(fmt)))
    timer = _timer(ctx, timer_id)
    if not (0 <= i_nsec < 10**9 and 0 <= v_nsec < 10**9) or i_sec < 0 or v_sec < 0:
        raise GuestErrno(E.EINVAL)
    if old:
        ctx.write(old, _current(ctx, timer, fmt))
    value, interval = v_sec * 10**9 + v_nsec, i_sec * 10**9 + i_nsec
    timer.armed += 1                 # a signal of the old setting, still pending, re-arms nothing
    timer.parked, timer.overrun_last = None, 0
    if value == 0:
        timer.deadline, timer.interval = None, 0
        return 0
    now = ctx.kernel.clock.monotonic_ns()
    if ctx.int32(flags) & TIMER_ABSTIME:
        # an absolute time already past fires at once, its missed periods being overruns
        value = value - clock_ns(ctx, timer.clock)
    timer.deadline, timer.interval = now + value, interval
    ctx.kernel.timer_armed()
    return 0


def _current(ctx, timer: PosixTimer, fmt: str) -> bytes:
    now, deadline = ctx.kernel.clock.monotonic_ns(), timer.deadline
    if deadline is None and timer.parked is not None and timer.interval:
        # parked until its signal is taken: its next period all the same (common_timer_get)
        expiry = timer.parked[0]
        deadline = expiry + timer.interval * ((now - expiry) // timer.interval + 1)
    left = 0 if deadline is None else max(1, deadline - now)
    return struct.pack(fmt, *divmod(timer.interval, 10**9), *divmod(left, 10**9))


@syscall("timer_gettime", args=(("timerid", K.INT), ("curr_value", K.STRUCT)))
def sys_timer_gettime(ctx, timer_id, cur):
    ctx.write(cur, _current(ctx, _timer(ctx, timer_id), _itimerspec_format(ctx, False)))
    return 0


@syscall("timer_gettime64", args=(("timerid", K.INT), ("curr_value", K.STRUCT)))
def sys_timer_gettime64(ctx, timer_id, cur):
    ctx.write(cur, _current(ctx, _timer(ctx, timer_id), _itimerspec_format(ctx, True)))
    return 0


@syscall("timer_getoverrun", args=(("timerid", K.INT),))
def sys_timer_getoverrun(ctx, timer_id):
    return _timer(ctx, timer_id).overrun_last


@syscall("timer_delete", args=(("timerid", K.INT),))
def sys_timer_delete(ctx, timer_id):
    _timer(ctx, timer_id).armed += 1          # a pending signal of it re-arms nothing
    del ctx.proc.posix_timers[ctx.int32(timer_id)]
    return 0
