"""io_setup, io_destroy, io_submit, io_getevents, io_pgetevents and io_cancel (fs/aio.c; the
model's contexts and requests are kernel_model/aio/).

The i386 calls are Linux's compat ones: aio_context_t and the iocb pointers io_submit reads
are 32-bit, io_getevents and io_pgetevents take an old 32-bit timespec (io_pgetevents_time64
the 64-bit one) and a compat __aio_sigset; the iocb and io_event layouts are the same.
"""
import struct

from ... import errno as E
from ...aio.abi import IO_EVENT, IOCB_KEY_OFFSET, KIOCB_KEY
from ...aio.ring import MAX_RING_EVENTS, KioCtx, doubled_request, ring_events
from ...aio.submit import submit_one
from ...aio.table import AioTable
from ...blocking import WouldBlock
from ...errno import GuestErrno
from ...memory.vm import MAP_SHARED, PROT_READ, PROT_WRITE
from ..kinds import K
from ..registry import syscall
from .timedwait import TimedWait

RING_NAME = b"/[aio] (deleted)"     # the ring's file on the internal aio fs, as maps shows it
SIGSET_SIZE = 8
GETEVENTS = (("ctx_id", K.HEX), ("min_nr", K.LONG), ("nr", K.LONG), ("events", K.STRUCT))


def _lookup(ctx, ctx_id: int) -> KioCtx | None:
    """lookup_ioctx: the id in the ring's first word (get_user), then the table's entry."""
    table = ctx.space.aio
    if table is None:
        return None
    try:
        ring_id = int.from_bytes(ctx.read(ctx_id, 4), "little")
    except GuestErrno:
        ring_id = None
    return table.lookup(ctx_id, ring_id)


@syscall("io_setup", args=(("nr_events", K.UINT), ("ctx_idp", K.PTR)), outside_hook=True)
def sys_io_setup(ctx, nr_events, ctxp):
    """get_user of *ctxp (EFAULT), which must be 0, and nr_events not 0 (EINVAL); then
    ioctx_alloc: a count too large for a ring is EINVAL, one past fs.aio-max-nr, alone or
    with every other context's, EAGAIN; the ring is mapped and its address stored."""
    if ctx.read_word(ctxp) or not nr_events & 0xFFFFFFFF:
        raise GuestErrno(E.EINVAL)
    nr_events &= 0xFFFFFFFF
    doubled, limits = doubled_request(nr_events), ctx.kernel.aio_limits
    if doubled > MAX_RING_EVENTS:
        raise GuestErrno(E.EINVAL)
    if not doubled or nr_events > limits.aio_max_nr or \
            limits.aio_nr + nr_events > limits.aio_max_nr:
        raise GuestErrno(E.EAGAIN)
    kioctx = KioCtx(ring_events(doubled), nr_events, ctx.kernel.wakeup)
    try:
        kioctx.user_id = ctx.vm.mmap(0, kioctx.mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED,
                                     name=RING_NAME,
                                     backing=lambda size: [(kioctx.pages, 0, size)])
    except GuestErrno:
        kioctx.release()
        raise
    if ctx.space.aio is None:
        ctx.space.aio = AioTable(limits)
    ctx.space.aio.add(kioctx)
    limits.aio_nr += nr_events
    try:
        ctx.write_word(ctxp, kioctx.user_id)
    except GuestErrno:
        _kill(ctx, kioctx)
        raise
    return 0


def _kill(ctx, kioctx: KioCtx) -> None:
    """kill_ioctx: out of the table (and of fs.aio-nr), its ring unmapped (vm_munmap)."""
    ctx.space.aio.kill(kioctx)
    ctx.vm.remove_range(kioctx.user_id, kioctx.user_id + kioctx.mmap_size)


@syscall("io_destroy", args=(("ctx_id", K.HEX),), outside_hook=True)
def sys_io_destroy(ctx, ctx_id):
    kioctx = _lookup(ctx, ctx_id)
    if kioctx is None:
        raise GuestErrno(E.EINVAL)
    _kill(ctx, kioctx)
    return 0


@syscall("io_submit", args=(("ctx_id", K.HEX), ("nr", K.LONG), ("iocbpp", K.STRUCT)))
def sys_io_submit(ctx, ctx_id, nr, iocbpp):
    """A negative nr is EINVAL, then the context (EINVAL); at most the ring's size of iocbs
    are submitted, in order, up to the first that fails: the count submitted, or that
    first one's error. One that must sleep (a read of an empty pipe) makes the call sleep
    if it is the first; after others, the call returns their count."""
    nr = ctx.signed(nr)
    if nr < 0:
        raise GuestErrno(E.EINVAL)
    kioctx = _lookup(ctx, ctx_id)
    if kioctx is None:
        raise GuestErrno(E.EINVAL)
    nr = min(nr, kioctx.nr_events)
    for i in range(nr):
        try:
            submit_one(ctx, kioctx, ctx.read_word(iocbpp + i * ctx.word))
        except (GuestErrno, WouldBlock):
            if i:
                return i
            raise
    return nr


@syscall("io_cancel", args=(("ctx_id", K.HEX), ("iocb", K.STRUCT), ("result", K.STRUCT)))
def sys_io_cancel(ctx, ctx_id, iocb, result):
    """The iocb's key must be KIOCB_KEY (EFAULT, EINVAL), the context valid (EINVAL), and the
    request one that may be cancelled and still waits (a poll; else EINVAL). Its event goes
    to the ring, and the call answers EINPROGRESS ("result" is no longer used)."""
    key = int.from_bytes(ctx.read(iocb + IOCB_KEY_OFFSET, 4), "little")
    if key != KIOCB_KEY:
        raise GuestErrno(E.EINVAL)
    kioctx = _lookup(ctx, ctx_id)
    if kioctx is None or not kioctx.cancel(iocb):
        raise GuestErrno(E.EINVAL)
    raise GuestErrno(E.EINPROGRESS)


@syscall("io_getevents", args=GETEVENTS + (("timeout", K.TIMESPEC_IN),))
def sys_io_getevents(ctx, ctx_id, min_nr, nr, events, timeout):
    return _getevents(ctx, (ctx_id, min_nr, nr, events, timeout), _native_timespec(ctx), None)


@syscall("io_pgetevents", args=GETEVENTS + (("timeout", K.TIMESPEC_IN), ("usig", K.STRUCT)))
def sys_io_pgetevents(ctx, ctx_id, min_nr, nr, events, timeout, usig):
    args = (ctx_id, min_nr, nr, events, timeout)
    return _getevents(ctx, args, _native_timespec(ctx), usig)


@syscall("io_pgetevents_time64", args=GETEVENTS + (("timeout", K.TIMESPEC64_IN),
                                                   ("usig", K.STRUCT)))
def sys_io_pgetevents_time64(ctx, ctx_id, min_nr, nr, events, timeout, usig):
    return _getevents(ctx, (ctx_id, min_nr, nr, events, timeout), "<qq", usig)


def _native_timespec(ctx) -> str:
    return "<ii" if ctx.word == 4 else "<qq"


def _sigmask(ctx, usig: int) -> int | None:
    """struct __aio_sigset {sigmask, sigsetsize} (EFAULT), then set_user_sigmask: none
    without a mask, EINVAL for a size other than the kernel's sigset_t, EFAULT."""
    if not usig:
        return None
    mask_ptr, size = struct.unpack("<II" if ctx.word == 4 else "<QQ", ctx.read(usig, 2 * ctx.word))
    if not mask_ptr:
        return None
    if size != SIGSET_SIZE:
        raise GuestErrno(E.EINVAL)
    return int.from_bytes(ctx.read(mask_ptr, SIGSET_SIZE), "little")


def _getevents(ctx, args: tuple, timespec: str, usig: int | None) -> int:
    """read_events: the timeout is read first (EFAULT; it is not checked: one at or below
    zero only looks), then the context (EINVAL) and 0 <= min_nr <= nr (EINVAL); the call
    returns once min_nr events are there, or when the time is up with what there is, at
    most nr. A signal ends the wait with EINTR (never restarted: signal(7))."""
    ctx_id, min_nr, nr, events, timeout = args
    timeout_ns = None
    if timeout:
        sec, nsec = struct.unpack(timespec, ctx.read(timeout, struct.calcsize(timespec)))
        timeout_ns = max(0, sec * 10**9 + nsec)
    sigmask = _sigmask(ctx, usig) if usig is not None else None
    min_nr, nr = ctx.signed(min_nr), ctx.signed(nr)

    def body(wait: TimedWait) -> int:
        kioctx = _lookup(ctx, ctx_id)
        if kioctx is None or not 0 <= min_nr <= nr:
            raise GuestErrno(E.EINVAL)
        kioctx.poll_pending()
        ready = kioctx.in_ring()
        if ready < min_nr and not wait.expired:
            wait.sleep(kioctx.channels(), "io_getevents")
        take = min(ready, nr)
        if take and not ctx.writable(events, take * IO_EVENT.size):
            raise GuestErrno(E.EFAULT)     # copy_to_user failed: the events stay in the ring
        ctx.write(events, b"".join(kioctx.take_events(take)))
        return take
    return TimedWait(ctx, ("io_getevents",) + args, timeout_ns, sigmask).run(body)
