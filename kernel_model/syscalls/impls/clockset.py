"""Setting and adjusting clocks: clock_settime (+ clock_settime64), settimeofday, i386 stime,
clock_adjtime (+ clock_adjtime64) and adjtimex (kernel/time/posix-timers.c, time.c, ntp.c,
timekeeping.c; compat layouts from kernel/time/time.c).

The guest's root holds CAP_SYS_TIME (creds.py's model), but the virtual clock moves only with
the run, so the sandbox refuses every request that would change a clock, as a security
module's security_settime64 would: EPERM — after the checks Linux makes first (unknown clock EINVAL, a clock that cannot
be set EINVAL, the copy from the guest EFAULT, an invalid time EINVAL). Reading the NTP state
(adjtimex/clock_adjtime with modes 0, or the read-only adjtime mode) is allowed: the virtual
clock is one no NTP daemon disciplines, so it answers as a freshly booted kernel does —
TIME_ERROR, status STA_UNSYNC, maxerror and esterror at NTP_PHASE_LIMIT, time constant 2,
tick 10000 us (USER_HZ 100), frequency offset 0 — with the virtual time.
"""
import struct
from typing import NoReturn

from ... import errno as E
from ...errno import GuestErrno
from ...time.cpu_clock_id import CLOCKFD, CLOCKFD_MASK, names_a_task
from ..kinds import K
from ..registry import syscall

CLOCK_REALTIME = 0
POSIX_CLOCKS = 12                     # posix_clocks[]: ids 0..11, 10 (SGI_CYCLE) unassigned
TIME_SETTOD_SEC_MAX = 9223372036 - 30 * 365 * 24 * 3600    # KTIME_SEC_MAX - TIME_UPTIME_SEC_MAX

ADJ_FREQUENCY, ADJ_SETOFFSET, ADJ_OFFSET_SINGLESHOT = 0x0002, 0x0100, 0x0001
ADJ_OFFSET_READONLY, ADJ_ADJTIME = 0x2000, 0x8000
TIME_ERROR, STA_UNSYNC = 5, 0x0040
NTP_PHASE_LIMIT = 16_000_000          # (MAXPHASE / NSEC_PER_USEC) << 5, in us
TOLERANCE = 500 << 16                 # MAXFREQ_SCALED / PPM_SCALE: 500 ppm, 16.16
TICK_USEC = 10_000
PPM_SCALE = 1000 << 16

# struct __kernel_timex (x86-64 adjtimex, clock_adjtime; i386 clock_adjtime64): 208 bytes;
# the output fields after modes, by name, with their offsets from this format (pads kept).
KERNEL_TIMEX = "<I4xqqqqi4xqqqqqqqqi4xqqqqqi44x"
# struct old_timex32 (i386 adjtimex and clock_adjtime): 128 bytes
OLD_TIMEX32 = "<Iiiiiiiiiiiiiiiiiiiii44x"


def _kclock(ctx, clock_id: int):
    """clockid_to_kclock(): "realtime", "cpu", "dynamic", another valid id, or EINVAL."""
    if clock_id < 0:
        return "dynamic" if clock_id & CLOCKFD_MASK == CLOCKFD else "cpu"
    if clock_id >= POSIX_CLOCKS or clock_id == 10:
        raise GuestErrno(E.EINVAL)
    return "realtime" if clock_id == CLOCK_REALTIME else "other"


def _set(ctx, clock_id: int, read_time) -> int:
    """The order of clock_settime: which clock, then the copy, then the clock's own setter."""
    kind = _kclock(ctx, clock_id)
    if kind == "other":
        raise GuestErrno(E.EINVAL)                 # no clock_set
    sec, nsec = read_time()                        # get_timespec64 (EFAULT)
    if kind == "dynamic":
        raise GuestErrno(E.EINVAL)                 # no fd is a PTP clock here
    if kind == "cpu":                              # posix_cpu_clock_set
        raise GuestErrno(E.EPERM if names_a_task(ctx, clock_id) else E.EINVAL)
    return _settod(sec, nsec)


def _settod(sec: int, nsec: int) -> NoReturn:
    """do_sys_settimeofday64 with a time: invalid EINVAL, else no CAP_SYS_TIME (EPERM)."""
    if not (0 <= sec < TIME_SETTOD_SEC_MAX and 0 <= nsec < 10**9):
        raise GuestErrno(E.EINVAL)
    raise GuestErrno(E.EPERM)


@syscall("clock_settime", args=(("clockid", K.CLOCK), ("tp", K.TIMESPEC_IN)))
def sys_clock_settime(ctx, clock_id, tp):
    # x86-64: struct __kernel_timespec; i386: old_timespec32 (get_old_timespec32)
    fmt = "<qq" if ctx.abi == "x86_64" else "<ii"
    return _set(ctx, ctx.int32(clock_id),
                lambda: struct.unpack(fmt, ctx.read(tp, struct.calcsize(fmt))))


@syscall("clock_settime64", args=(("clockid", K.CLOCK), ("tp", K.TIMESPEC64_IN)))
def sys_clock_settime64(ctx, clock_id, tp):
    def read_time():
        sec, nsec = struct.unpack("<qQ", ctx.read(tp, 16))
        return sec, nsec & 0xFFFFFFFF              # get_timespec64 in a compat syscall
    return _set(ctx, ctx.int32(clock_id), read_time)


@syscall("settimeofday", args=(("tv", K.STRUCT), ("tz", K.PTR)))
def sys_settimeofday(ctx, tv, tz):
    fmt = "<qq" if ctx.abi == "x86_64" else "<ii"
    time = struct.unpack(fmt, ctx.read(tv, struct.calcsize(fmt))) if tv else None
    if time is not None and not 0 <= time[1] <= 10**6:
        raise GuestErrno(E.EINVAL)
    if tz:
        ctx.read(tz, 8)                            # struct timezone: two ints
    if time is not None:
        _settod(time[0], time[1] * 1000)
    raise GuestErrno(E.EPERM)                      # security_settime64(): no CAP_SYS_TIME


@syscall("stime")
def sys_stime(ctx, tptr):
    ctx.read(tptr, 4)                              # get_user(old_time32_t) (EFAULT)
    raise GuestErrno(E.EPERM)


# ---- NTP state: adjtimex and clock_adjtime ---------------------------------------------------
def _validate(modes: int, freq: int) -> None:
    """timekeeping_validate_timex() without CAP_SYS_TIME."""
    if modes & ADJ_ADJTIME:
        if not modes & ADJ_OFFSET_SINGLESHOT:
            raise GuestErrno(E.EINVAL)
        if not modes & ADJ_OFFSET_READONLY:
            raise GuestErrno(E.EPERM)
    elif modes:
        raise GuestErrno(E.EPERM)
    if modes & ADJ_SETOFFSET:
        raise GuestErrno(E.EPERM)
    if modes & ADJ_FREQUENCY and not -(2**63) // PPM_SCALE <= freq <= (2**63 - 1) // PPM_SCALE:
        raise GuestErrno(E.EINVAL)


def _ntp_fields(ctx) -> tuple:
    """__do_adjtimex's answer: offset, freq, maxerror, esterror, status, constant,
    precision, tolerance, time (s, us), tick, ppsfreq, jitter, shift, stabil, jitcnt,
    calcnt, errcnt, stbcnt, tai."""
    ns = ctx.kernel.clock.realtime_ns()
    return (0, 0, NTP_PHASE_LIMIT, NTP_PHASE_LIMIT, STA_UNSYNC, 2, 1, TOLERANCE,
            ns // 10**9, ns % 10**9 // 1000, TICK_USEC, 0, 0, 0, 0, 0, 0, 0, 0, 0)


def _adjtimex(ctx, buf: int, compat: bool) -> int:
    fmt = struct.Struct(OLD_TIMEX32 if compat else KERNEL_TIMEX)
    raw = ctx.read(buf, fmt.size)                  # copy_from_user of the whole struct
    modes, _offset, freq, *_ = fmt.unpack(raw)
    _validate(modes, freq)
    fields = _ntp_fields(ctx)
    if compat:                                     # put_old_timex32 builds a zeroed struct
        out = fmt.pack(modes, *(ctx.int32(v) for v in fields))
    else:                                          # the whole struct goes back: pads kept
        out = bytearray(raw)
        packed = fmt.pack(modes, *fields)
        for start, end in _value_ranges(fmt.format):
            out[start:end] = packed[start:end]
        out = bytes(out)
    ctx.write(buf, out)
    return TIME_ERROR


def _value_ranges(fmt: str) -> list[tuple[int, int]]:
    """Byte ranges of the fields (not the pads) of a little-endian struct format."""
    ranges, at, i = [], 0, 1
    while i < len(fmt):
        j = i
        while fmt[j].isdigit():
            j += 1
        count, code = int(fmt[i:j] or 1), fmt[j]
        size = struct.calcsize("<" + code) * count
        if code != "x":
            ranges.append((at, at + size))
        at, i = at + size, j + 1
    return ranges


@syscall("adjtimex", args=(("buf", K.STRUCT),))
def sys_adjtimex(ctx, buf):
    return _adjtimex(ctx, buf, compat=ctx.abi == "i386")


def _clock_adjtime(ctx, clock_id, buf, compat: bool) -> int:
    fmt = struct.Struct(OLD_TIMEX32 if compat else KERNEL_TIMEX)
    ctx.read(buf, fmt.size)                        # the copy comes first (EFAULT)
    kind = _kclock(ctx, ctx.int32(clock_id))
    if kind == "dynamic":
        raise GuestErrno(E.EINVAL)                 # pc_clock_adjtime: no such clock fd
    if kind != "realtime":
        raise GuestErrno(E.EOPNOTSUPP)             # no clock_adj
    return _adjtimex(ctx, buf, compat)


@syscall("clock_adjtime", args=(("clockid", K.CLOCK), ("buf", K.STRUCT)))
def sys_clock_adjtime(ctx, clock_id, buf):
    return _clock_adjtime(ctx, clock_id, buf, compat=ctx.abi == "i386")


@syscall("clock_adjtime64", args=(("clockid", K.CLOCK), ("buf", K.STRUCT)))
def sys_clock_adjtime64(ctx, clock_id, buf):
    return _clock_adjtime(ctx, clock_id, buf, compat=False)
