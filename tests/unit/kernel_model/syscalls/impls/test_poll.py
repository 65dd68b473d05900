"""poll and ppoll over a fake context: revents, sleeping on several pipes, deadlines kept
across re-execution, the timeout write-back and ppoll's temporary signal mask."""
import struct

import pytest

from kernel_model import errno as E
from kernel_model.blocking import WouldBlock
from kernel_model.errno import GuestErrno
from kernel_model.fs.stdio import CapturedOutput
from kernel_model.fs.pipe import Pipe
from kernel_model.readiness import (POLLERR, POLLHUP, POLLIN, POLLNVAL, POLLOUT, POLLRDNORM,
                                    POLLWRNORM)
from kernel_model.syscalls.impls.poll import sys_poll, sys_ppoll, sys_ppoll_time64
from kernel_model.syscalls.impls.timedwait import RESTART_KEY

from .fakectx import BASE, fake_ctx

FDS = BASE               # the struct pollfd array
TS = BASE + 0x800        # a timespec
MASK = BASE + 0x900      # a sigset_t
MS = 10**6


def add_pipe(ctx, ino=5):
    pipe = Pipe(ctx.kernel.wakeup, ino)
    return pipe, ctx.proc.fds.install(pipe.read_end()), ctx.proc.fds.install(pipe.write_end())


def put_pollfds(ctx, *entries):
    ctx.write(FDS, b"".join(struct.pack("<ihh", fd, events, -1) for fd, events in entries))
    return len(entries)


def revents(ctx, n):
    return [struct.unpack_from("<ihh", ctx.read(FDS, 8 * n), 8 * i)[2] for i in range(n)]


def test_ready_fds_and_revents():
    ctx = fake_ctx()
    pipe, r, w = add_pipe(ctx)
    ctx.proc.fds.get(w).write(b"x")
    stdio = ctx.proc.fds.install(CapturedOutput())
    n = put_pollfds(ctx, (r, POLLIN), (w, POLLOUT), (stdio, POLLIN | POLLOUT), (-1, POLLIN), (99, POLLIN))
    assert sys_poll(ctx, FDS, n, 0) == 4
    assert revents(ctx, n) == [POLLIN, POLLOUT, POLLIN | POLLOUT, 0, POLLNVAL]


def test_hup_and_err_are_reported_unasked():
    ctx = fake_ctx()
    _, r, w = add_pipe(ctx)
    _, r2, w2 = add_pipe(ctx, 6)
    ctx.proc.fds.close(w)                     # r: end of file
    ctx.proc.fds.close(r2)                    # w2: nobody reads
    n = put_pollfds(ctx, (r, 0), (w2, 0))
    assert sys_poll(ctx, FDS, n, 0) == 2
    assert revents(ctx, n) == [POLLHUP, POLLERR]


def test_nothing_ready_sleeps_on_every_pipe_once_and_writes_nothing():
    ctx = fake_ctx()
    p1, r1, _ = add_pipe(ctx, 11)
    p2, r2, _ = add_pipe(ctx, 12)
    n = put_pollfds(ctx, (r1, POLLIN), (r2, POLLIN), (r1, POLLIN))
    with pytest.raises(WouldBlock) as info:
        sys_poll(ctx, FDS, n, -1)
    assert info.value.channel == [p1, p2]     # a list: wake on any of them
    assert info.value.deadline_ns is None
    assert info.value.reason == "poll on pipe:[11], pipe:[12]"
    assert revents(ctx, n) == [-1, -1, -1]    # re-execution must find the arguments as given
    ctx.proc.fds.get(r2 + 1).write(b"!")      # the writer of p2 (fd 3)
    assert sys_poll(ctx, FDS, n, -1) == 1
    assert revents(ctx, n) == [0, POLLIN, 0]


def test_timeout_deadline_survives_re_execution_then_poll_returns_zero():
    ctx = fake_ctx()
    _, r, _ = add_pipe(ctx)
    n = put_pollfds(ctx, (r, POLLIN))
    start = ctx.kernel.clock.monotonic_ns()
    with pytest.raises(WouldBlock) as info:
        sys_poll(ctx, FDS, n, 100)
    assert info.value.deadline_ns == start + 100 * MS
    ctx.kernel.clock.advance(60 * MS)         # a spurious wakeup: the deadline must not move
    with pytest.raises(WouldBlock) as info:
        sys_poll(ctx, FDS, n, 100)
    assert info.value.deadline_ns == start + 100 * MS
    ctx.kernel.clock.advance(40 * MS)         # the scheduler jumped to the deadline
    assert sys_poll(ctx, FDS, n, 100) == 0
    assert revents(ctx, n) == [0]
    assert RESTART_KEY not in ctx.thread.restart
    with pytest.raises(WouldBlock) as info:   # a new call gets a new deadline
        sys_poll(ctx, FDS, n, 100)
    assert info.value.deadline_ns == start + 200 * MS


def test_data_arriving_before_the_deadline_ends_the_wait():
    ctx = fake_ctx()
    _, r, w = add_pipe(ctx)
    n = put_pollfds(ctx, (r, POLLIN))
    with pytest.raises(WouldBlock):
        sys_poll(ctx, FDS, n, 1000)
    ctx.proc.fds.get(w).write(b"x")
    assert sys_poll(ctx, FDS, n, 1000) == 1
    assert RESTART_KEY not in ctx.thread.restart


def test_zero_timeout_never_sleeps_and_no_fds_with_timeout_is_a_sleep():
    ctx = fake_ctx()
    _, r, _ = add_pipe(ctx)
    n = put_pollfds(ctx, (r, POLLIN))
    assert sys_poll(ctx, FDS, n, 0) == 0
    with pytest.raises(WouldBlock) as info:
        sys_poll(ctx, 0, 0, 5)
    assert info.value.channel == [] and info.value.reason == "poll on nothing"


def test_poll_errors():
    ctx = fake_ctx()
    with pytest.raises(GuestErrno) as info:
        sys_poll(ctx, FDS, ctx.proc.fds.limit + 1, 0)
    assert info.value.errno == E.EINVAL
    with pytest.raises(GuestErrno) as info:
        sys_poll(ctx, 0x1000, 1, 0)
    assert info.value.errno == E.EFAULT


@pytest.mark.parametrize("abi,call,fmt", [("x86_64", sys_ppoll, "<qq"), ("i386", sys_ppoll, "<ii"),
                                          ("i386", sys_ppoll_time64, "<qq")])
def test_ppoll_timespec_per_abi_and_remaining_time_written_back(abi, call, fmt):
    ctx = fake_ctx(abi)
    _, r, w = add_pipe(ctx)
    n = put_pollfds(ctx, (r, POLLIN))
    ctx.write(TS, struct.pack(fmt, 2, 500_000_000))
    start = ctx.kernel.clock.monotonic_ns()
    with pytest.raises(WouldBlock) as info:
        call(ctx, FDS, n, TS, 0, 8)
    assert info.value.deadline_ns == start + 2_500_000_000
    assert struct.unpack(fmt, ctx.read(TS, struct.calcsize(fmt))) == (2, 500_000_000)
    ctx.kernel.clock.advance(1_000_000_000)
    ctx.proc.fds.get(w).write(b"x")
    assert call(ctx, FDS, n, TS, 0, 8) == 1
    assert struct.unpack(fmt, ctx.read(TS, struct.calcsize(fmt))) == (1, 500_000_000)


def test_ppoll_null_timeout_waits_for_ever_and_zero_timeout_is_not_written():
    ctx = fake_ctx()
    _, r, _ = add_pipe(ctx)
    n = put_pollfds(ctx, (r, POLLIN))
    with pytest.raises(WouldBlock) as info:
        sys_ppoll(ctx, FDS, n, 0, 0, 8)
    assert info.value.deadline_ns is None
    ctx.thread.restart.clear()                # as the kernel does when a signal ends the sleep
    ctx.write(TS, struct.pack("<qq", 0, 0))
    assert sys_ppoll(ctx, FDS, n, TS, 0, 8) == 0


@pytest.mark.parametrize("ts", [(-1, 0), (0, 10**9), (0, -1)])
def test_ppoll_invalid_timespec_is_einval(ts):
    ctx = fake_ctx()
    ctx.write(TS, struct.pack("<qq", *ts))
    with pytest.raises(GuestErrno) as info:
        sys_ppoll(ctx, FDS, 0, TS, 0, 8)
    assert info.value.errno == E.EINVAL


def test_ppoll_mask_is_in_force_while_sleeping_and_restored_after():
    ctx = fake_ctx()
    _, r, w = add_pipe(ctx)
    n = put_pollfds(ctx, (r, POLLIN))
    ctx.thread.sigmask = 0b1010
    ctx.write(MASK, struct.pack("<Q", 0b0101 | 1 << 8))     # asks to block SIGKILL (9) too
    with pytest.raises(WouldBlock):
        sys_ppoll(ctx, FDS, n, 0, MASK, 8)
    assert ctx.thread.sigmask == 0b0101                      # SIGKILL cannot be blocked
    assert ctx.thread.saved_sigmask == 0b1010
    with pytest.raises(WouldBlock):                          # re-executed, still nothing
        sys_ppoll(ctx, FDS, n, 0, MASK, 8)
    assert ctx.thread.saved_sigmask == 0b1010
    ctx.proc.fds.get(w).write(b"x")
    assert sys_ppoll(ctx, FDS, n, 0, MASK, 8) == 1
    assert ctx.thread.sigmask == 0b1010 and not ctx.thread.restart
    assert ctx.thread.saved_sigmask is None


def test_ppoll_bad_sigsetsize_is_einval():
    ctx = fake_ctx()
    with pytest.raises(GuestErrno) as info:
        sys_ppoll(ctx, FDS, 0, 0, MASK, 4)
    assert info.value.errno == E.EINVAL


def test_errors_end_the_wait_and_restore_the_mask():
    """A failure on re-execution (the pollfd array unmapped meanwhile) completes the call."""
    ctx = fake_ctx()
    _, r, _ = add_pipe(ctx)
    elsewhere = 0x30000
    ctx.mem.areas[elsewhere] = bytearray(struct.pack("<ihh", r, POLLIN, 0))
    ctx.thread.sigmask = 1
    ctx.write(MASK, struct.pack("<Q", 2))
    with pytest.raises(WouldBlock):
        sys_ppoll(ctx, elsewhere, 1, 0, MASK, 8)
    del ctx.mem.areas[elsewhere]
    with pytest.raises(GuestErrno) as info:
        sys_ppoll(ctx, elsewhere, 1, 0, MASK, 8)
    assert info.value.errno == E.EFAULT
    assert ctx.thread.sigmask == 1 and not ctx.thread.restart
    assert ctx.thread.saved_sigmask is None


def test_sleep_interrupted_by_an_ignored_signal_keeps_the_callers_mask():
    """The signal code clears thread.restart but leaves saved_sigmask when the call is re-run."""
    ctx = fake_ctx()
    _, r, w = add_pipe(ctx)
    n = put_pollfds(ctx, (r, POLLIN))
    ctx.thread.sigmask = 0b1
    ctx.write(MASK, struct.pack("<Q", 0b10))
    with pytest.raises(WouldBlock):
        sys_ppoll(ctx, FDS, n, 0, MASK, 8)
    ctx.thread.restart.clear()
    ctx.proc.fds.get(w).write(b"x")
    assert sys_ppoll(ctx, FDS, n, 0, MASK, 8) == 1
    assert ctx.thread.sigmask == 0b1


def test_pipe_poll_bits_with_rdnorm_wrnorm():
    ctx = fake_ctx()
    _, r, w = add_pipe(ctx)
    ctx.proc.fds.get(w).write(b"x")
    n = put_pollfds(ctx, (r, POLLIN | POLLRDNORM), (w, POLLOUT | POLLWRNORM))
    assert sys_poll(ctx, FDS, n, 0) == 2
    assert revents(ctx, n) == [POLLIN | POLLRDNORM, POLLOUT | POLLWRNORM]
