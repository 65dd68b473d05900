"""timerfd_create, timerfd_settime, timerfd_gettime (and i386's _time64 forms) over
fs/timerfd.py: the calls of fs/timerfd.c, on the virtual clock (timecalls.py clock_ns)."""
import struct

from ... import errno as E
from ...errno import GuestErrno
from ...fs.constants import O_CLOEXEC, O_NONBLOCK
from ...fs.timerfd import TimerFd
from ..kinds import K
from ..registry import syscall
from .timecalls import clock_ns

TFD_TIMER_ABSTIME, TFD_TIMER_CANCEL_ON_SET = 1, 2
TFD_CREATE_FLAGS = O_CLOEXEC | O_NONBLOCK
# timerfd_create's clocks: REALTIME, MONOTONIC, BOOTTIME and their _ALARM forms (fs/timerfd.c)
TIMERFD_CLOCKS = frozenset({0, 1, 7, 8, 9})


@syscall("timerfd_create", args=(("clockid", K.CLOCK), ("flags", K.HEX)))
def sys_timerfd_create(ctx, clock_id, flags):
    clock, flags = ctx.int32(clock_id), flags & 0xFFFFFFFF
    if clock not in TIMERFD_CLOCKS or flags & ~TFD_CREATE_FLAGS:
        raise GuestErrno(E.EINVAL)
    f = TimerFd(ctx.kernel.wakeup, clock, nonblocking=bool(flags & O_NONBLOCK))
    return ctx.proc.fds.install(f, at=ctx.proc.fds.lowest_free(), cloexec=bool(flags & O_CLOEXEC))


def _timerfd(ctx, fd: int) -> TimerFd:
    f = ctx.proc.fds.get(ctx.int32(fd))                  # EBADF
    if not isinstance(f, TimerFd):
        raise GuestErrno(E.EINVAL)
    return f


def _format(ctx, time64: bool) -> str:
    return "<qqqq" if time64 or ctx.word == 8 else "<iiii"


@syscall("timerfd_settime", args=(("fd", K.FD), ("flags", K.HEX), ("new_value", K.STRUCT),
                                  ("old_value", K.STRUCT)))
def sys_timerfd_settime(ctx, fd, flags, new, old):
    return _settime(ctx, fd, flags, new, old, time64=False)


@syscall("timerfd_settime64", args=(("fd", K.FD), ("flags", K.HEX), ("new_value", K.STRUCT),
                                    ("old_value", K.STRUCT)))
def sys_timerfd_settime64(ctx, fd, flags, new, old):
    return _settime(ctx, fd, flags, new, old, time64=True)


def _settime(ctx, fd, flags, new, old, *, time64: bool) -> int:
    """do_timerfd_settime's order: flags, the new value (EFAULT, then EINVAL for a bad
    timespec), the file (EBADF, EINVAL), then the old value written."""
    fmt = _format(ctx, time64)
    flags = flags & 0xFFFFFFFF
    if flags & ~(TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET):
        raise GuestErrno(E.EINVAL)
    i_sec, i_nsec, v_sec, v_nsec = struct.unpack(fmt, ctx.read(new, struct.calcsize(fmt)))
    if min(i_sec, v_sec) < 0 or not (0 <= i_nsec < 10**9 and 0 <= v_nsec < 10**9):
        raise GuestErrno(E.EINVAL)
    f = _timerfd(ctx, fd)
    previous = _current(ctx, f, fmt)
    value, interval = v_sec * 10**9 + v_nsec, i_sec * 10**9 + i_nsec
    deadline = None
    if value:
        if flags & TFD_TIMER_ABSTIME:
            value -= clock_ns(ctx, f.clock)          # (a time already past expires at once)
        deadline = ctx.kernel.clock.monotonic_ns() + value
    f.set(deadline, interval)
    if deadline is not None:
        ctx.kernel.timerfds.watch(f)
        ctx.kernel.timer_armed()
    if old:
        ctx.write(old, previous)
    return 0


def _current(ctx, f: TimerFd, fmt: str) -> bytes:
    now = ctx.kernel.clock.monotonic_ns()
    f.expire(now)
    left = 0 if f.deadline is None else max(1, f.deadline - now)
    return struct.pack(fmt, *divmod(f.interval, 10**9), *divmod(left, 10**9))


@syscall("timerfd_gettime", args=(("fd", K.FD), ("curr_value", K.STRUCT)))
def sys_timerfd_gettime(ctx, fd, cur):
    ctx.write(cur, _current(ctx, _timerfd(ctx, fd), _format(ctx, False)))
    return 0


@syscall("timerfd_gettime64", args=(("fd", K.FD), ("curr_value", K.STRUCT)))
def sys_timerfd_gettime64(ctx, fd, cur):
    ctx.write(cur, _current(ctx, _timerfd(ctx, fd), _format(ctx, True)))
    return 0
