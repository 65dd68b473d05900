"""poll, ppoll, select, pselect6: wait until one of several fds is ready, or a timeout passes.

Readiness comes from kernel_model.readiness (pipes report their state, every other file is
always ready). With nothing ready and time left the call sleeps on the wait channels of all
its files at once (a list channel, see timedwait.py) and is re-executed after any of them
changes; guest memory (revents, fd sets, the remaining timeout) is written only when the call
completes, so a re-execution reads the caller's arguments unchanged.
"""
import struct

from ... import errno as E
from ...blocking import RESTART_BLOCK
from ...errno import GuestErrno
from ...memory.vm import PROT_READ
from ...readiness import (POLLERR, POLLHUP, POLLNVAL, SELECT_EXCEPT, SELECT_READ, SELECT_WRITE,
                          file_events, wait_channels)
from ..kinds import K
from ..registry import syscall
from .timedwait import TimedWait

POLLFD = struct.Struct("<iHH")             # struct pollfd: int fd; short events, revents
SIGSET_SIZE = 8                           # the kernel's sigset_t: 64 signals
TIME64 = "<qq"                            # struct __kernel_timespec: the *_time64 calls


def _native_time(ctx) -> str:
    """struct timespec / timeval of the ABI: two longs (i386: the old 32-bit layout)."""
    return "<ii" if ctx.word == 4 else "<qq"


def _read_time(ctx, addr: int, fmt: str, unit_ns: int) -> int:
    """A timespec (unit_ns=1) or timeval (unit_ns=1000) as nanoseconds; EINVAL if negative
    (poll_select_set_timeout: timespec64_valid). Whole seconds in tv_usec/tv_nsec carry over,
    as kern_select() normalises tv_usec and a valid timespec has none."""
    sec, frac = struct.unpack(fmt, ctx.read(addr, struct.calcsize(fmt)))
    if sec < 0 or frac < 0 or (unit_ns == 1 and frac >= 10**9):
        raise GuestErrno(E.EINVAL)
    return sec * 10**9 + frac * unit_ns


def _write_back_time(ctx, addr: int, fmt: str, unit_ns: int):
    """poll_select_finish(): store the time left, unless the timeout was zero or infinite.
    A failed store is ignored, so that a read-only timeout does not fail a completed call."""
    def finish(wait: TimedWait) -> None:
        if not addr or not wait.timeout_ns:
            return
        left = wait.remaining_ns()
        try:
            ctx.write(addr, struct.pack(fmt, left // 10**9, left % 10**9 // unit_ns))
        except GuestErrno:
            pass
    return finish


def _read_sigmask(ctx, addr: int, size: int) -> int | None:
    if not addr:
        return None
    if size != SIGSET_SIZE:
        raise GuestErrno(E.EINVAL)
    if ctx.accessible_prefix(addr, SIGSET_SIZE, PROT_READ) < SIGSET_SIZE:
        raise GuestErrno(E.EFAULT)           # a PROT_NONE page is mapped but not readable
    return struct.unpack("<Q", ctx.read(addr, SIGSET_SIZE))[0]


class _Waiters:
    """The channels of the files a call looks at, each once, in the order first seen."""

    def __init__(self):
        self.names: dict[object, str] = {}

    def add(self, file) -> None:
        for channel in wait_channels(file):
            if channel not in self.names:
                self.names[channel] = getattr(file, "path", b"?").decode(errors="replace")

    def sleep(self, wait: TimedWait, call: str):
        what = ", ".join(self.names.values()) or "nothing"
        wait.sleep(list(self.names), f"{call} on {what}")


# ---- poll -----------------------------------------------------------------------------------
def _do_poll(ctx, key: tuple, fds_addr: int, nfds: int, timeout_ns: int | None,
             sigmask: int | None = None, on_finish=None) -> int:
    nfds &= 0xFFFFFFFF
    if nfds > ctx.proc.fds.limit:
        raise GuestErrno(E.EINVAL)            # do_sys_poll(): more than RLIMIT_NOFILE

    def body(wait: TimedWait) -> int:
        raw = ctx.read(fds_addr, nfds * POLLFD.size)
        entries = [POLLFD.unpack_from(raw, i * POLLFD.size) for i in range(nfds)]
        waiters = _Waiters()
        revents = [_pollfd_revents(ctx.proc.fds, fd, events, waiters) for fd, events, _ in entries]
        ready = sum(1 for r in revents if r)
        if not ready and not wait.expired:
            waiters.sleep(wait, "poll")
        out = b"".join(POLLFD.pack(fd, events, r) for (fd, events, _), r in zip(entries, revents))
        ctx.write(fds_addr, out)
        return ready

    return TimedWait(ctx, key, timeout_ns, sigmask).run(body, on_finish)


def _pollfd_revents(fds, fd: int, events: int, waiters: _Waiters) -> int:
    """do_pollfd(): a negative fd is skipped, a closed one is POLLNVAL; POLLERR and POLLHUP
    are reported whether asked for or not."""
    if fd < 0:
        return 0
    entry = fds.entries.get(fd)
    if entry is None:
        return POLLNVAL
    waiters.add(entry.file)
    return file_events(entry.file) & (events | POLLERR | POLLHUP)


@syscall("poll", args=(("fds", K.STRUCT), ("nfds", K.UINT), ("timeout", K.INT)))
def sys_poll(ctx, fds, nfds, timeout_ms):
    timeout_ms = ctx.int32(timeout_ms)
    timeout_ns = None if timeout_ms < 0 else timeout_ms * 10**6
    if timeout_ns is not None:      # made again as restart_syscall (fs/select.c do_restart_poll)
        ctx.thread.restart[RESTART_BLOCK] = True
    return _do_poll(ctx, ("poll", fds, nfds, timeout_ms), fds, nfds, timeout_ns)


@syscall("ppoll", args=(("fds", K.STRUCT), ("nfds", K.UINT), ("tmo_p", K.STRUCT),
                        ("sigmask", K.STRUCT), ("sigsetsize", K.ULONG)))
def sys_ppoll(ctx, fds, nfds, tmo_p, sigmask, sigsetsize):
    return _ppoll(ctx, "ppoll", fds, nfds, tmo_p, sigmask, sigsetsize, _native_time(ctx))


@syscall("ppoll_time64")
def sys_ppoll_time64(ctx, fds, nfds, tmo_p, sigmask, sigsetsize):
    return _ppoll(ctx, "ppoll_time64", fds, nfds, tmo_p, sigmask, sigsetsize, TIME64)


def _ppoll(ctx, name, fds, nfds, tmo_p, sigmask, sigsetsize, fmt):
    timeout_ns = _read_time(ctx, tmo_p, fmt, 1) if tmo_p else None
    mask = _read_sigmask(ctx, sigmask, sigsetsize)
    return _do_poll(ctx, (name, fds, nfds, tmo_p, sigmask), fds, nfds, timeout_ns, mask,
                    _write_back_time(ctx, tmo_p, fmt, 1))


# ---- select ---------------------------------------------------------------------------------
def _do_select(ctx, key: tuple, n: int, sets: tuple[int, int, int], timeout_ns: int | None,
               sigmask: int | None = None, on_finish=None) -> int:
    n = ctx.int32(n)
    if n < 0:
        raise GuestErrno(E.EINVAL)
    # core_sys_select(): n beyond the fd table's size is cut, so a 1024-bit fd_set that ends
    # in unmapped memory is read only up to the table's 64 (or 128, 256...) bits
    n = min(n, ctx.proc.fds.max_fds)
    nbytes = -(-n // (8 * ctx.word)) * ctx.word      # whole longs, as the fd_set is an array of them

    def body(wait: TimedWait) -> int:
        wanted = [_read_fd_set(ctx, addr, nbytes, n) for addr in sets]
        fds = _bits(wanted[0] | wanted[1] | wanted[2])
        files = {fd: ctx.proc.fds.get(fd) for fd in fds}  # max_select_fd(): EBADF if one is closed
        waiters = _Waiters()
        found = [0, 0, 0]
        for fd in fds:
            waiters.add(files[fd])
            events = file_events(files[fd])
            for i, bits in enumerate((SELECT_READ, SELECT_WRITE, SELECT_EXCEPT)):
                if wanted[i] >> fd & 1 and events & bits:
                    found[i] |= 1 << fd
        ready = sum(len(_bits(s)) for s in found)
        if not ready and not wait.expired:
            waiters.sleep(wait, "select")
        for addr, result in zip(sets, found):
            if addr:
                ctx.write(addr, result.to_bytes(nbytes, "little"))
        return ready

    return TimedWait(ctx, key, timeout_ns, sigmask).run(body, on_finish)


def _read_fd_set(ctx, addr: int, nbytes: int, n: int) -> int:
    if not addr:
        return 0
    return int.from_bytes(ctx.read(addr, nbytes), "little") & ((1 << n) - 1)


def _bits(value: int) -> list[int]:
    return [i for i in range(value.bit_length()) if value >> i & 1]


def _select(ctx, name, n, inp, outp, exp, tvp):
    fmt = _native_time(ctx)
    timeout_ns = _read_time(ctx, tvp, fmt, 1000) if tvp else None
    return _do_select(ctx, (name, n, inp, outp, exp, tvp), n, (inp, outp, exp), timeout_ns,
                      on_finish=_write_back_time(ctx, tvp, fmt, 1000))


@syscall("select", args=(("nfds", K.INT), ("readfds", K.STRUCT), ("writefds", K.STRUCT),
                         ("exceptfds", K.STRUCT), ("timeout", K.STRUCT)))
def sys_select(ctx, n, inp, outp, exp, tvp):
    if ctx.abi == "i386":
        # i386's call 82 is old_select: one pointer to struct sel_arg_struct
        # { unsigned long n; fd_set *inp, *outp, *exp; struct timeval *tvp; }.
        n, inp, outp, exp, tvp = struct.unpack("<5I", ctx.read(n, 20))
    return _select(ctx, "select", n, inp, outp, exp, tvp)


@syscall("_newselect", args=(("nfds", K.INT), ("readfds", K.STRUCT), ("writefds", K.STRUCT),
                             ("exceptfds", K.STRUCT), ("timeout", K.STRUCT)))
def sys_newselect(ctx, n, inp, outp, exp, tvp):
    return _select(ctx, "_newselect", n, inp, outp, exp, tvp)


@syscall("pselect6", args=(("nfds", K.INT), ("readfds", K.STRUCT), ("writefds", K.STRUCT),
                           ("exceptfds", K.STRUCT), ("timeout", K.STRUCT), ("sigmask", K.STRUCT)))
def sys_pselect6(ctx, n, inp, outp, exp, tsp, sig):
    return _pselect6(ctx, "pselect6", n, inp, outp, exp, tsp, sig, _native_time(ctx))


@syscall("pselect6_time64")
def sys_pselect6_time64(ctx, n, inp, outp, exp, tsp, sig):
    return _pselect6(ctx, "pselect6_time64", n, inp, outp, exp, tsp, sig, TIME64)


def _pselect6(ctx, name, n, inp, outp, exp, tsp, sig, fmt):
    timeout_ns = _read_time(ctx, tsp, fmt, 1) if tsp else None
    mask = None
    if sig:
        # The sixth argument points to { const sigset_t *ss; size_t ss_len; } in native words.
        ss, ss_len = struct.unpack("<II" if ctx.word == 4 else "<QQ", ctx.read(sig, 2 * ctx.word))
        mask = _read_sigmask(ctx, ss, ss_len)
    return _do_select(ctx, (name, n, inp, outp, exp, tsp, sig), n, (inp, outp, exp), timeout_ns,
                      mask, _write_back_time(ctx, tsp, fmt, 1))
