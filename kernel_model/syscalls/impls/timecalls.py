"""Clocks, sleeps and randomness: all virtual (kernel_model/time/clock.py) or from the run's seed."""
import hashlib
import struct

from ... import errno as E
from ...blocking import RESTART_BLOCK, WouldBlock
from ...errno import GuestErrno
from ...memory.vm import PROT_WRITE
from ...signals.delivery import INTERRUPT_KEY
from ..kinds import K
from ..registry import syscall

CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID = 0, 1, 2, 3
CLOCK_MONOTONIC_RAW, CLOCK_REALTIME_COARSE, CLOCK_MONOTONIC_COARSE, CLOCK_BOOTTIME = 4, 5, 6, 7
TIMER_ABSTIME = 1
GRND_NONBLOCK, GRND_RANDOM, GRND_INSECURE = 1, 2, 4


def clock_ns(ctx, clock_id: int) -> int:
    clock = ctx.kernel.clock
    if clock_id in (CLOCK_REALTIME, CLOCK_REALTIME_COARSE, 8, 11):      # + _ALARM, TAI
        return clock.realtime_ns()
    if clock_id in (CLOCK_MONOTONIC, CLOCK_MONOTONIC_RAW, CLOCK_MONOTONIC_COARSE, CLOCK_BOOTTIME, 9):
        # the caller's time namespace moves these (timens_add_monotonic/boottime): absolute
        # deadlines computed from this value are taken back to the host's by the same offset
        return clock.monotonic_ns() + ctx.proc.time_ns.offset(clock_id)
    if clock_id in (CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID) or \
            clock_id < 0 and _names_a_task(ctx, clock_id):
        return clock.elapsed_ns
    raise GuestErrno(E.EINVAL)


def _names_a_task(ctx, clock_id: int) -> bool:
    """Another task's CPU clock (clock_getcpuclockid, pthread_getcpuclockid) reads what that
    task's own CPU clock ids read, the run's clock (time/task_times.py); a dynamic (fd) clock
    is no PTP device here (EINVAL)."""
    from ...time.cpu_clock_id import is_cpu_clock, names_a_task
    return is_cpu_clock(clock_id) and names_a_task(ctx, clock_id, gettime=True)


def _timespec(ns: int, fmt: str) -> bytes:
    return struct.pack(fmt, ns // 10**9, ns % 10**9)


def _read_timespec(ctx, addr: int, fmt: str) -> int:
    sec, nsec = struct.unpack(fmt, ctx.read(addr, struct.calcsize(fmt)))
    if sec < 0 or not 0 <= nsec < 10**9:
        raise GuestErrno(E.EINVAL)
    return sec * 10**9 + nsec


def _native_timespec(ctx) -> str:
    return "<ii" if ctx.word == 4 else "<qq"


@syscall("clock_gettime", args=(("clockid", K.CLOCK), ("tp", K.TIMESPEC_OUT)))
def sys_clock_gettime(ctx, clock_id, tp):
    ctx.write(tp, _timespec(clock_ns(ctx, ctx.int32(clock_id)), _native_timespec(ctx)))
    return 0


@syscall("clock_gettime64", args=(("clockid", K.CLOCK), ("tp", K.TIMESPEC64_OUT)))
def sys_clock_gettime64(ctx, clock_id, tp):
    ctx.write(tp, _timespec(clock_ns(ctx, ctx.int32(clock_id)), "<qq"))
    return 0


@syscall("clock_getres")
def sys_clock_getres(ctx, clock_id, res):
    return _clock_getres(ctx, clock_id, res, _native_timespec(ctx))


@syscall("clock_getres_time64")
def sys_clock_getres_time64(ctx, clock_id, res):
    """i386's: a struct __kernel_timespec of two 64-bit fields, as clock_gettime64's."""
    return _clock_getres(ctx, clock_id, res, "<qq")


def _clock_getres(ctx, clock_id, res, fmt: str) -> int:
    clock_ns(ctx, ctx.int32(clock_id))
    if res:
        ctx.write(res, _timespec(1, fmt))
    return 0


@syscall("gettimeofday", args=(("tv", K.TIMEVAL_OUT), ("tz", K.PTR)))
def sys_gettimeofday(ctx, tv, tz):
    ns = ctx.kernel.clock.realtime_ns()
    fmt = _native_timespec(ctx)
    if tv:
        ctx.write(tv, struct.pack(fmt, ns // 10**9, ns % 10**9 // 1000))
    if tz:
        ctx.write(tz, struct.pack("<ii", 0, 0))       # UTC, no DST
    return 0


@syscall("time", args=(("tloc", K.PTR),))
def sys_time(ctx, tloc):
    sec = ctx.kernel.clock.realtime_ns() // 10**9
    if tloc:
        ctx.write_word(tloc, sec)
    return sec


def _sleep_until(ctx, deadline: int, rem: int = 0, fmt: str = "<qq") -> int:
    """Sleep on the virtual clock: other threads run meanwhile; when nothing else can run,
    the scheduler moves time forward to the earliest deadline. A relative sleep with `rem`
    writes the time left there when a signal interrupts it (do_nanosleep: EFAULT instead of
    EINTR if it cannot), through the restart state's INTERRUPT_KEY (signals/delivery.py)."""
    restart = ctx.thread.restart
    restart.setdefault("deadline", deadline)
    if ctx.kernel.clock.monotonic_ns() >= restart["deadline"]:
        return 0
    deadline = restart["deadline"]
    if rem:
        # Written at delivery, after other calls: through a context of this thread's own, as
        # the shared one may by then be another process's (LTP kill12: a parent's time left
        # landed in its child, on the stack protector's canary of the child's sleep()).
        own = ctx.for_later()
        restart[INTERRUPT_KEY] = lambda: _write_remaining(own, rem, fmt, deadline)
    raise WouldBlock(("sleep", ctx.thread.tid), "sleep", deadline_ns=deadline)


def _write_remaining(ctx, rem: int, fmt: str, deadline: int) -> int | None:
    left = max(0, deadline - ctx.kernel.clock.monotonic_ns())
    try:
        ctx.write(rem, _timespec(left, fmt))
    except GuestErrno:
        return E.EFAULT
    return None


def _sleep(ctx, ns: int, rem: int, fmt: str) -> int:
    # a relative sleep a signal without handler ends is made again as restart_syscall
    # (hrtimer_nanosleep: -ERESTART_RESTARTBLOCK)
    ctx.thread.restart[RESTART_BLOCK] = True
    return _sleep_until(ctx, ctx.kernel.clock.monotonic_ns() + ns, rem, fmt)


@syscall("nanosleep", args=(("req", K.TIMESPEC_IN), ("rem", K.PTR)))
def sys_nanosleep(ctx, req, rem):
    return _sleep(ctx, _read_timespec(ctx, req, _native_timespec(ctx)), rem, _native_timespec(ctx))


@syscall("clock_nanosleep", args=(("clockid", K.CLOCK), ("flags", K.TIMER_FLAGS),
                                  ("request", K.TIMESPEC_IN), ("remain", K.PTR)))
def sys_clock_nanosleep(ctx, clock_id, flags, req, rem):
    return _clock_nanosleep(ctx, clock_id, flags, req, rem, _native_timespec(ctx))


@syscall("clock_nanosleep_time64", args=(("clockid", K.CLOCK), ("flags", K.TIMER_FLAGS),
                                         ("request", K.TIMESPEC64_IN), ("remain", K.PTR)))
def sys_clock_nanosleep_time64(ctx, clock_id, flags, req, rem):
    return _clock_nanosleep(ctx, clock_id, flags, req, rem, "<qq")


def _clock_nanosleep(ctx, clock_id, flags, req, rem, fmt):
    clock = ctx.int32(clock_id)
    if clock == CLOCK_THREAD_CPUTIME_ID:
        raise GuestErrno(E.EOPNOTSUPP)        # the thread clock has no nsleep (posix-cpu-timers.c)
    now = clock_ns(ctx, clock)                # EINVAL for an unknown clock
    target = _read_timespec(ctx, req, fmt)
    if flags & TIMER_ABSTIME:
        return _sleep_until(ctx, ctx.kernel.clock.monotonic_ns() + target - now)
    return _sleep(ctx, target, rem, fmt)


@syscall("getrandom", args=(("buf", K.BUF_OUT), ("buflen", K.ULONG), ("flags", K.HEX)))
def sys_getrandom(ctx, buf, count, flags):
    if flags & ~(GRND_NONBLOCK | GRND_RANDOM | GRND_INSECURE) \
            or flags & (GRND_RANDOM | GRND_INSECURE) == GRND_RANDOM | GRND_INSECURE:
        raise GuestErrno(E.EINVAL)
    # The copy stops at the first byte the guest cannot write: the bytes before it are the
    # result, none at all is EFAULT (get_random_bytes_user); only what is copied is drawn
    # from the stream (a fuzzer's 32 MiB read into a 16 KiB buffer drew it all first).
    wanted = min(count, 0x1FFFFFF)
    count = _writable_prefix(ctx, buf, wanted)
    if wanted and not count:
        raise GuestErrno(E.EFAULT)
    if count:
        ctx.store(buf, ctx.kernel.random_bytes(count))
    return count


def _writable_prefix(ctx, addr: int, size: int) -> int:
    """How many bytes from `addr` on (up to `size`) lie in writable mappings."""
    end, at, vm = addr + size, addr, ctx.proc.vm
    while at < end:
        vma = vm.vma_at(at)
        if vma is None or not vma.perms & PROT_WRITE:
            break
        at = vma.end
    return min(at, end) - addr


def seeded_stream(seed: int, label: bytes, offset: int, count: int) -> bytes:
    """`count` bytes at `offset` of a deterministic stream for (seed, label) (SHAKE-256)."""
    return hashlib.shake_256(b"%d|" % seed + label).digest(offset + count)[offset:]
