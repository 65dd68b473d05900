"""futex(2): wait and wake on a word of guest memory (the basis of every mutex and join).

A waiter sleeps on the futex's key (memory/futex_key.py): ("futex", address space, address), or
the shared pages and offset for a word in MAP_SHARED memory, so that processes meet on it. A
blocked FUTEX_WAIT is re-executed after it is woken; `thread.restart["futex_woken"]` makes that re-execution return 0
even when the word still holds the expected value (a plain FUTEX_WAKE), so no wake-up is lost.
"""
import struct

from ... import errno as E
from ...blocking import RESTART_BLOCK, WouldBlock
from ...errno import GuestErrno
from ...memory.futex_key import futex_key
from ..kinds import K
from ..registry import syscall

FUTEX_WAIT, FUTEX_WAKE, FUTEX_REQUEUE, FUTEX_CMP_REQUEUE, FUTEX_WAKE_OP = 0, 1, 3, 4, 5
FUTEX_LOCK_PI, FUTEX_UNLOCK_PI, FUTEX_TRYLOCK_PI = 6, 7, 8
FUTEX_WAIT_BITSET, FUTEX_WAKE_BITSET = 9, 10
FUTEX_PRIVATE_FLAG, FUTEX_CLOCK_REALTIME = 128, 256
NS = 10**9


def _key(ctx, uaddr: int, op: int):
    return futex_key(ctx.proc.space, uaddr, bool(op & FUTEX_PRIVATE_FLAG))


def _deadline(ctx, timeout: int, absolute: bool, realtime: bool, time64: bool) -> int | None:
    """The wait's end on the monotonic clock, computed once and kept across re-executions."""
    if not timeout:
        return None
    restart = ctx.thread.restart
    if "deadline" not in restart:
        fmt = "<qq" if time64 or ctx.word == 8 else "<ii"
        sec, nsec = struct.unpack(fmt, ctx.read(timeout, struct.calcsize(fmt)))
        if sec < 0 or not 0 <= nsec < NS:
            raise GuestErrno(E.EINVAL)
        clock = ctx.kernel.clock
        value = sec * NS + nsec
        if not absolute:            # FUTEX_WAIT: a relative timeout
            restart["deadline"] = clock.monotonic_ns() + value
        elif realtime:              # FUTEX_WAIT_BITSET|FUTEX_CLOCK_REALTIME
            restart["deadline"] = clock.monotonic_ns() + (value - clock.realtime_ns())
        else:
            restart["deadline"] = value
    return restart["deadline"]


def _futex(ctx, uaddr, op, val, timeout, uaddr2, val3, time64=False):
    cmd = op & ~(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME)
    kernel, private = ctx.kernel, bool(op & FUTEX_PRIVATE_FLAG)
    if cmd in (FUTEX_WAIT, FUTEX_WAIT_BITSET):
        if ctx.thread.restart.pop("futex_woken", False):
            return 0
        deadline = _deadline(ctx, timeout, cmd == FUTEX_WAIT_BITSET, bool(op & FUTEX_CLOCK_REALTIME), time64)
        if deadline is not None and kernel.clock.monotonic_ns() >= deadline:
            raise GuestErrno(E.ETIMEDOUT)
        if uaddr % 4:
            raise GuestErrno(E.EINVAL)
        current = struct.unpack("<I", ctx.read(uaddr, 4))[0]
        if current != val & 0xFFFFFFFF:
            raise GuestErrno(E.EAGAIN)
        if deadline is not None:
            # futex_wait's -ERESTART_RESTARTBLOCK under a timeout (futex_wait_restart, to the
            # same deadline), -ERESTARTSYS for ever (kernel/futex/waitwake.c)
            ctx.thread.restart[RESTART_BLOCK] = True
        raise WouldBlock(_key(ctx, uaddr, op), f"futex {uaddr:#x}", deadline_ns=deadline)
    if cmd in (FUTEX_WAKE, FUTEX_WAKE_BITSET):
        return kernel.futex_wake(ctx.proc, uaddr, ctx.int32(val), private=private)
    if cmd in (FUTEX_REQUEUE, FUTEX_CMP_REQUEUE):
        # futex_requeue: nr_wake and nr_requeue (val2, in the timeout's slot: do_futex's
        # (u32) cast) are ints, a negative one is EINVAL before the word is compared
        limit = ctx.int32(timeout & 0xFFFFFFFF)
        if ctx.int32(val) < 0 or limit < 0:
            raise GuestErrno(E.EINVAL)
        if cmd == FUTEX_CMP_REQUEUE and struct.unpack("<I", ctx.read(uaddr, 4))[0] != val3 & 0xFFFFFFFF:
            raise GuestErrno(E.EAGAIN)
        woken = kernel.futex_wake(ctx.proc, uaddr, ctx.int32(val), private=private)
        moved = 0
        old, new = _key(ctx, uaddr, op), _key(ctx, uaddr2, op)
        for t in kernel.scheduler.threads:
            if moved >= limit:
                break
            if old in t.wait_channels:
                t.wait_channels = tuple(new if c == old else c for c in t.wait_channels)
                moved += 1
        return woken + moved
    if cmd == FUTEX_WAKE_OP:
        return _wake_op(ctx, uaddr, val, timeout, uaddr2, val3)
    raise GuestErrno(E.ENOSYS)


def _wake_op(ctx, uaddr, val, val2, uaddr2, val3):
    """FUTEX_WAKE_OP (futex(2)): *uaddr2 = op(*uaddr2, oparg); wake uaddr; maybe wake uaddr2."""
    op, cmp = (val3 >> 28) & 0xF, (val3 >> 24) & 0xF
    oparg, cmparg = (val3 >> 12) & 0xFFF, val3 & 0xFFF
    if op & 8:
        oparg = 1 << oparg
    old = struct.unpack("<I", ctx.read(uaddr2, 4))[0]
    new = {0: oparg, 1: old + oparg, 2: old | oparg, 3: old & ~oparg, 4: old ^ oparg}.get(op & 7)
    if new is None:
        raise GuestErrno(E.ENOSYS)
    ctx.write(uaddr2, struct.pack("<I", new & 0xFFFFFFFF))
    woken = ctx.kernel.futex_wake(ctx.proc, uaddr, ctx.int32(val))
    signed_old = old - (1 << 32) if old & 0x80000000 else old
    hit = {0: signed_old == cmparg, 1: signed_old != cmparg, 2: signed_old < cmparg,
           3: signed_old <= cmparg, 4: signed_old > cmparg, 5: signed_old >= cmparg}.get(cmp, False)
    if hit:
        woken += ctx.kernel.futex_wake(ctx.proc, uaddr2, ctx.int32(val2))
    return woken


@syscall("futex", args=(("uaddr", K.PTR), ("futex_op", K.FUTEX_OP), ("val", K.INT),
                        ("timeout", K.TIMESPEC_IN), ("uaddr2", K.PTR), ("val3", K.HEX)))
def sys_futex(ctx, uaddr, op, val, timeout, uaddr2, val3):
    return _futex(ctx, uaddr, op, val, timeout, uaddr2, val3)


@syscall("futex_time64")
def sys_futex_time64(ctx, uaddr, op, val, timeout, uaddr2, val3):
    return _futex(ctx, uaddr, op, val, timeout, uaddr2, val3, time64=True)


FUTEX_WAITV_MAX = 128
FUTEX_32 = 2                        # FUTEX2_SIZE_U32: the one size futex_waitv takes (Linux 6.1)
WAITER_FLAGS = FUTEX_32 | FUTEX_PRIVATE_FLAG
CLOCK_REALTIME, CLOCK_MONOTONIC = 0, 1


@syscall("futex_waitv", args=(("waiters", K.PTR), ("nr_futexes", K.UINT), ("flags", K.HEX),
                              ("timeout", K.TIMESPEC64_IN), ("clockid", K.CLOCK)))
def sys_futex_waitv(ctx, waiters, nr_futexes, flags, timeout, clockid):
    """kernel/futex/syscalls.c sys_futex_waitv: wait on up to 128 futexes at once; the index
    of the one woken is returned. Checks in its order: flags 0, a count of 1..128 and an array
    (EINVAL), the clock of an (absolute) timeout (EINVAL) and the timeout itself (EFAULT), then
    each struct futex_waitv {u64 val; u64 uaddr; u32 flags; u32 reserved} (EFAULT; EINVAL for
    unknown or missing size flags, a reserved word, a misaligned word); a word not holding its
    value is EAGAIN."""
    nr = nr_futexes & 0xFFFFFFFF
    if flags or not 0 < nr <= FUTEX_WAITV_MAX or not waiters:
        raise GuestErrno(E.EINVAL)
    restart = ctx.thread.restart
    deadline = _waitv_deadline(ctx, timeout, ctx.int32(clockid)) if timeout else None
    entries = _waiters(ctx, waiters, nr)
    keys = [futex_key(ctx.proc.space, uaddr, bool(wflags & FUTEX_PRIVATE_FLAG))
            for _, uaddr, wflags in entries]
    if restart.pop("futex_woken", False):
        woken = restart.pop("futex_woken_key", None)
        return keys.index(woken) if woken in keys else 0
    # futex_wait_multiple: the values are checked before the first sleep, the timeout after it
    if not restart.get("waitv_slept"):
        for val, uaddr, _ in entries:
            if struct.unpack("<I", ctx.read(uaddr, 4))[0] != val & 0xFFFFFFFF:
                raise GuestErrno(E.EAGAIN)
    if deadline is not None and ctx.kernel.clock.monotonic_ns() >= deadline:
        raise GuestErrno(E.ETIMEDOUT)
    restart["waitv_slept"] = True
    raise WouldBlock(keys, f"futex_waitv {nr} futexes", deadline_ns=deadline)


def _waitv_deadline(ctx, timeout: int, clockid: int) -> int:
    """futex2_setup_timeout: an absolute time on CLOCK_MONOTONIC or CLOCK_REALTIME, as the
    monotonic time it ends at (kept across re-executions)."""
    if clockid not in (CLOCK_REALTIME, CLOCK_MONOTONIC):
        raise GuestErrno(E.EINVAL)
    restart = ctx.thread.restart
    if "deadline" not in restart:
        sec, nsec = struct.unpack("<qq", ctx.read(timeout, 16))
        clock = ctx.kernel.clock
        value = sec * NS + nsec
        restart["deadline"] = value if clockid == CLOCK_MONOTONIC else \
            clock.monotonic_ns() + (value - clock.realtime_ns())
    return restart["deadline"]


def _waiters(ctx, waiters: int, nr: int) -> list[tuple[int, int, int]]:
    raw = ctx.read(waiters, 24 * nr)
    entries = []
    for i in range(nr):
        val, uaddr, wflags, reserved = struct.unpack_from("<QQII", raw, 24 * i)
        if wflags & ~WAITER_FLAGS or reserved or not wflags & FUTEX_32 or uaddr % 4:
            raise GuestErrno(E.EINVAL)
        entries.append((val, uaddr & ctx.mask, wflags))
    return entries
