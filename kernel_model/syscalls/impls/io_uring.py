"""io_uring_setup, io_uring_enter and io_uring_register (io_uring/io_uring.c, register.c); the
rings and the requests are kernel_model/io_uring/."""
import struct

from ... import errno as E
from ...blocking import WouldBlock
from ...errno import GuestErrno
from ...io_uring.abi import (CQ_FLAGS, CQ_HEAD, CQ_MASK, CQ_ENTRIES, CQ_OFFSETS, CQ_OVERFLOW,
                             CQ_TAIL, CQES, ENTER_FLAGS, FEATURES, IORING_ENTER_GETEVENTS,
                             IORING_MAX_CQ_ENTRIES, IORING_MAX_ENTRIES, IORING_REGISTER_BUFFERS,
                             IORING_SETUP_CLAMP, IORING_SETUP_CQSIZE, IORING_UNREGISTER_BUFFERS,
                             PARAMS, PARAMS_SIZE, SETUP_FLAGS, SQ_DROPPED, SQ_ENTRIES, SQ_FLAGS,
                             SQ_HEAD, SQ_MASK, SQ_OFFSETS, SQ_TAIL)
from ...io_uring.ops import OPERATIONS, Pending, Sqe, issue
from ...io_uring.ring import IoRing
from ...readiness import wait_channels
from ..kinds import K
from ..registry import syscall

IORING_MAX_REG_BUFFERS = 1 << 14
IORING_OP_SENDMSG, IORING_OP_RECVMSG = 9, 10
IORING_RECVSEND_POLL_FIRST = 1
MSG_NOSIGNAL = 0x4000
SIGSET_SIZE = 8
SUBMITTED_KEY = "io_uring_submitted"      # thread.restart: what a sleeping enter submitted


def _power_of_two_above(n: int) -> int:
    return 1 << (n - 1).bit_length()


@syscall("io_uring_setup", args=(("entries", K.UINT), ("params", K.STRUCT)))
def sys_io_uring_setup(ctx, entries, params):
    """io_uring_setup: the params (EFAULT), reserved words zero and known flags (EINVAL);
    io_uring_fill_params: entries not 0, at most IORING_MAX_ENTRIES unless CLAMP (EINVAL),
    rounded up to a power of two; the CQ twice that, or IORING_SETUP_CQSIZE's own (not 0,
    clamped likewise, not below the SQ's). The offsets and features are written back, the
    file installed close-on-exec (anon_inode "[io_uring]")."""
    raw = bytearray(ctx.read(params, PARAMS_SIZE))
    fields = list(PARAMS.unpack_from(raw))
    flags, cq_entries = fields[2], fields[1]
    if any(fields[7:10]) or flags & ~SETUP_FLAGS:
        raise GuestErrno(E.EINVAL)
    entries &= 0xFFFFFFFF
    if not entries or entries > IORING_MAX_ENTRIES and not flags & IORING_SETUP_CLAMP:
        raise GuestErrno(E.EINVAL)
    sq_entries = _power_of_two_above(min(entries, IORING_MAX_ENTRIES))
    if flags & IORING_SETUP_CQSIZE:
        if not cq_entries or cq_entries > IORING_MAX_CQ_ENTRIES and not flags & IORING_SETUP_CLAMP:
            raise GuestErrno(E.EINVAL)
        cq_entries = _power_of_two_above(min(cq_entries, IORING_MAX_CQ_ENTRIES))
        if cq_entries < sq_entries:
            raise GuestErrno(E.EINVAL)
    else:
        cq_entries = 2 * sq_entries
    ring = IoRing(ctx.kernel.wakeup, sq_entries, cq_entries)
    fields[0], fields[1], fields[5] = sq_entries, cq_entries, FEATURES
    PARAMS.pack_into(raw, 0, *fields)
    SQ_OFFSETS.pack_into(raw, PARAMS.size, SQ_HEAD, SQ_TAIL, SQ_MASK, SQ_ENTRIES, SQ_FLAGS,
                         SQ_DROPPED, ring.sq_array, 0, 0)
    CQ_OFFSETS.pack_into(raw, PARAMS.size + SQ_OFFSETS.size, CQ_HEAD, CQ_TAIL, CQ_MASK,
                         CQ_ENTRIES, CQ_OVERFLOW, CQES, CQ_FLAGS, 0, 0)
    try:
        ctx.write(params, bytes(raw))
        fd = ctx.proc.fds.lowest_free()
    except GuestErrno:
        ring.close()
        raise
    return ctx.proc.fds.install(ring, at=fd, cloexec=True)


def _ring(ctx, fd: int) -> IoRing:
    f = ctx.proc.fds.get(ctx.int32(fd))
    if not isinstance(f, IoRing):
        raise GuestErrno(E.EOPNOTSUPP)     # io_is_uring_fops
    return f


@syscall("io_uring_enter", args=(("fd", K.FD), ("to_submit", K.UINT), ("min_complete", K.UINT),
                                 ("flags", K.HEX), ("sig", K.SIGSET_IN), ("sigsz", K.ULONG)))
def sys_io_uring_enter(ctx, fd, to_submit, min_complete, flags, sig, sigsz):
    """Known flags only (EINVAL), an io_uring file (EBADF, EOPNOTSUPP); up to to_submit
    queued entries are consumed and run, each posting its completion; with GETEVENTS the
    call then waits for min_complete completions (at most the CQ's size), under the signal
    mask `sig` if given (sigsz must be the kernel's sigset_t: EINVAL). It returns the count
    submitted, else what the wait gave (0, or EINTR from a signal)."""
    flags &= 0xFFFFFFFF
    if flags & ~ENTER_FLAGS:
        raise GuestErrno(E.EINVAL)
    ring = _ring(ctx, fd)
    thread = ctx.thread
    submitted = thread.restart.pop(SUBMITTED_KEY, None)
    if submitted is None:
        submitted = _submit(ctx, ring, min(to_submit & 0xFFFFFFFF, ring.pending_sqes()))
    _retry_pending(ctx, ring)
    if flags & IORING_ENTER_GETEVENTS:
        if sig and sigsz != SIGSET_SIZE:
            raise GuestErrno(E.EINVAL)
        wanted = min(min_complete & 0xFFFFFFFF, ring.cq_entries)
        if ring.ready_cqes() < wanted:
            thread.restart[SUBMITTED_KEY] = submitted
            channels = [ring] + [c for p in ring.pending for c in wait_channels(p.file)]
            raise WouldBlock(channels, "io_uring_enter")
    return submitted


def _submit(ctx, ring: IoRing, count: int) -> int:
    """io_submit_sqes: each entry consumed is submitted, whatever its result."""
    for _ in range(count):
        fields = ring.next_sqe()
        if fields is None:
            continue                      # dropped: sq_dropped (not counted in the model)
        sqe = Sqe(*fields[:10])
        _complete(ctx, ring, sqe, issue(ctx, ring, sqe))
    return count


def _complete(ctx, ring: IoRing, sqe: Sqe, res) -> None:
    if isinstance(res, Pending):
        ring.pending.append(res)
    else:
        ring.post(sqe.user_data, res)


def _retry_pending(ctx, ring: IoRing) -> None:
    """Issue again the requests whose file would have slept (io_uring's poll-armed retry)."""
    waiting, ring.pending = ring.pending, []
    for request in waiting:
        _complete(ctx, ring, request.sqe, issue(ctx, ring, request.sqe))


@syscall("io_uring_register", args=(("fd", K.FD), ("opcode", K.UINT), ("arg", K.PTR),
                                    ("nr_args", K.UINT)))
def sys_io_uring_register(ctx, fd, opcode, arg, nr_args):
    """IORING_REGISTER_BUFFERS (EBUSY with buffers already, EINVAL for no or too many, EFAULT
    for a buffer without an address or over 1 GiB) and IORING_UNREGISTER_BUFFERS (EINVAL with
    arguments, ENXIO with none registered); any other opcode is EINVAL in the model."""
    ring = _ring(ctx, fd)
    opcode, nr_args = opcode & 0xFFFFFFFF, nr_args & 0xFFFFFFFF
    if opcode == IORING_REGISTER_BUFFERS:
        if ring.buffers is not None:
            raise GuestErrno(E.EBUSY)
        if not arg or not nr_args or nr_args > IORING_MAX_REG_BUFFERS:
            raise GuestErrno(E.EINVAL)
        fmt = "<II" if ctx.word == 4 else "<QQ"
        raw = ctx.read(arg, nr_args * 2 * ctx.word)
        buffers = [struct.unpack_from(fmt, raw, i * 2 * ctx.word) for i in range(nr_args)]
        if any(not base and size or size > 1 << 30 for base, size in buffers):
            raise GuestErrno(E.EFAULT)     # io_buffer_validate
        ring.buffers = buffers
        return 0
    if opcode == IORING_UNREGISTER_BUFFERS:
        if arg or nr_args:
            raise GuestErrno(E.EINVAL)
        if ring.buffers is None:
            raise GuestErrno(E.ENXIO)
        ring.buffers = None
        return 0
    raise GuestErrno(E.EINVAL)


def _socket_message(send: bool):
    """IORING_OP_SENDMSG and RECVMSG (io_uring/net.c): sendmsg(2) and recvmsg(2) on the struct
    msghdr at sqe->addr with sqe->msg_flags, a send never raising SIGPIPE (MSG_NOSIGNAL); a
    flag in sqe->ioprio other than RECVSEND_POLL_FIRST is EINVAL, a file that is no socket
    ENOTSOCK. A socket that would sleep keeps the request pending (io_uring arms a poll); one
    opened O_NONBLOCK completes it with EAGAIN (____sys_sendmsg's MSG_DONTWAIT in io-wq; the
    host's 6.18 was seen to keep such a request waiting instead). The calls are the socket layer's, registered
    here: the io_uring package does not reach up to the system calls."""
    def run(ctx, ring, sqe: Sqe):
        from .socket_args import sock_of
        from .sockmsg import receive_msghdr, send_msghdr
        if sqe.ioprio & ~IORING_RECVSEND_POLL_FIRST:
            raise GuestErrno(E.EINVAL)
        sock = sock_of(ctx, sqe.fd)
        try:
            if send:
                return send_msghdr(ctx, sock, sqe.addr & ctx.mask, sqe.rw_flags | MSG_NOSIGNAL)
            return receive_msghdr(ctx, sock, sqe.addr & ctx.mask, sqe.rw_flags)
        except WouldBlock:
            return Pending(sqe, sock)
    return run


OPERATIONS[IORING_OP_SENDMSG] = _socket_message(send=True)
OPERATIONS[IORING_OP_RECVMSG] = _socket_message(send=False)
