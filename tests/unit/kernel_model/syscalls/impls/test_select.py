"""select, _newselect, old i386 select and pselect6 over a fake context: fd_set layout per
ABI, the three sets, EBADF, sleeping, the timeval write-back and pselect6's signal mask."""
import struct

import pytest

from kernel_model import errno as E
from kernel_model.blocking import WouldBlock
from kernel_model.errno import GuestErrno
from kernel_model.fs.stdio import CapturedOutput
from kernel_model.fs.pipe import Pipe
from kernel_model.syscalls.impls.poll import (sys_newselect, sys_pselect6, sys_pselect6_time64,
                                              sys_select)

from .fakectx import BASE, fake_ctx

IN, OUT, EX = BASE, BASE + 0x100, BASE + 0x200       # three fd_sets of 128 bytes
TV = BASE + 0x300
ARGS = BASE + 0x400
MASK = BASE + 0x500
SET_BYTES = 128                                      # FD_SETSIZE 1024 bits


def add_pipe(ctx, ino=5):
    pipe = Pipe(ctx.kernel.wakeup, ino)
    return pipe, ctx.proc.fds.install(pipe.read_end()), ctx.proc.fds.install(pipe.write_end())


def put_set(ctx, addr, *fds):
    ctx.write(addr, sum(1 << fd for fd in fds).to_bytes(SET_BYTES, "little"))


def get_set(ctx, addr):
    value = int.from_bytes(ctx.read(addr, SET_BYTES), "little")
    return [fd for fd in range(SET_BYTES * 8) if value >> fd & 1]


def select_on(abi):
    """The plain select of the ABI: x86-64's select, i386's _newselect."""
    return sys_select if abi == "x86_64" else sys_newselect


@pytest.mark.parametrize("abi", ["i386", "x86_64"])
def test_sets_report_what_is_ready(abi):
    ctx = fake_ctx(abi)
    _, r, w = add_pipe(ctx)                          # fds 0, 1: empty pipe
    _, r2, w2 = add_pipe(ctx)                        # fds 2, 3: data waiting
    ctx.proc.fds.get(w2).write(b"x")
    stdio = ctx.proc.fds.install(CapturedOutput())   # fd 4: always ready
    fd40 = ctx.proc.fds.install(CapturedOutput(), at=40)   # beyond the first 32-bit long
    put_set(ctx, IN, r, r2, stdio, fd40)
    put_set(ctx, OUT, w, stdio)
    put_set(ctx, EX, r, r2, stdio)
    ctx.write(TV, struct.pack("<qq" if abi == "x86_64" else "<ii", 0, 0))
    assert select_on(abi)(ctx, 41, IN, OUT, EX, TV) == 5
    assert get_set(ctx, IN) == [r2, stdio, fd40]
    assert get_set(ctx, OUT) == [w, stdio]
    assert get_set(ctx, EX) == []                    # nothing has urgent data


def test_only_whole_longs_below_n_are_read_and_written():
    ctx = fake_ctx("i386")
    stdio = ctx.proc.fds.install(CapturedOutput())
    ctx.write(IN, b"\xff" * 8)                       # fds 0..63, but n = 1: one 32-bit long
    assert sys_newselect(ctx, 1, IN, 0, 0, 0) == 1      # fds 1..31 (closed) are beyond n
    assert ctx.read(IN, 8) == b"\x01\0\0\0" + b"\xff" * 4     # the second long is untouched
    assert stdio == 0


def test_closed_fd_in_a_set_is_ebadf():
    ctx = fake_ctx()
    ctx.proc.fds.install(CapturedOutput())
    put_set(ctx, OUT, 0, 7)
    with pytest.raises(GuestErrno) as info:
        sys_select(ctx, 8, 0, OUT, 0, 0)
    assert info.value.errno == E.EBADF
    assert sys_select(ctx, 7, 0, OUT, 0, 0) == 1     # fd 7 is beyond n: ignored


def test_negative_n_is_einval_and_bad_timeval_is_einval():
    ctx = fake_ctx()
    with pytest.raises(GuestErrno) as info:
        sys_select(ctx, -1 & 0xFFFFFFFF, 0, 0, 0, 0)
    assert info.value.errno == E.EINVAL
    ctx.write(TV, struct.pack("<qq", 0, -5))
    with pytest.raises(GuestErrno) as info:
        sys_select(ctx, 0, 0, 0, 0, TV)
    assert info.value.errno == E.EINVAL


def test_nothing_ready_sleeps_then_times_out_with_empty_sets_and_zero_time_left():
    ctx = fake_ctx()
    pipe, r, w = add_pipe(ctx, 77)
    put_set(ctx, IN, r)
    ctx.write(TV, struct.pack("<qq", 1, 2_500_000))          # tv_usec >= 1 s carries over
    start = ctx.kernel.clock.monotonic_ns()
    with pytest.raises(WouldBlock) as info:
        sys_select(ctx, r + 1, IN, 0, 0, TV)
    assert info.value.channel == [pipe]
    assert info.value.reason == "select on pipe:[77]"
    assert info.value.deadline_ns == start + 3_500_000_000
    assert get_set(ctx, IN) == [r]                           # untouched while sleeping
    ctx.kernel.clock.advance(3_500_000_000)
    assert sys_select(ctx, r + 1, IN, 0, 0, TV) == 0
    assert get_set(ctx, IN) == []
    assert struct.unpack("<qq", ctx.read(TV, 16)) == (0, 0)


def test_time_left_is_written_as_a_timeval():
    ctx = fake_ctx("i386")
    _, r, w = add_pipe(ctx)
    put_set(ctx, IN, r)
    ctx.write(TV, struct.pack("<ii", 5, 0))
    with pytest.raises(WouldBlock):
        sys_newselect(ctx, r + 1, IN, 0, 0, TV)
    ctx.kernel.clock.advance(1_250_000_000)
    ctx.proc.fds.get(w).write(b"x")
    assert sys_newselect(ctx, r + 1, IN, 0, 0, TV) == 1
    assert struct.unpack("<ii", ctx.read(TV, 8)) == (3, 750_000)


def test_hangup_counts_as_readable_and_no_reader_as_writable():
    """fs/select.c POLLIN_SET has POLLHUP, POLLOUT_SET has POLLERR: the call then fails fast."""
    ctx = fake_ctx()
    _, r, w = add_pipe(ctx)
    _, r2, w2 = add_pipe(ctx)
    ctx.proc.fds.close(w)
    ctx.proc.fds.close(r2)
    put_set(ctx, IN, r)
    put_set(ctx, OUT, w2)
    assert sys_select(ctx, 4, IN, OUT, 0, 0) == 2
    assert get_set(ctx, IN) == [r] and get_set(ctx, OUT) == [w2]


def test_i386_old_select_takes_a_pointer_to_its_arguments():
    ctx = fake_ctx("i386")
    stdio = ctx.proc.fds.install(CapturedOutput())
    put_set(ctx, OUT, stdio)
    ctx.write(ARGS, struct.pack("<5I", 1, 0, OUT, 0, 0))
    assert sys_select(ctx, ARGS, 0, 0, 0, 0) == 1
    assert get_set(ctx, OUT) == [stdio]


@pytest.mark.parametrize("abi,call,fmt,words", [
    ("x86_64", sys_pselect6, "<qq", "<QQ"), ("i386", sys_pselect6, "<ii", "<II"),
    ("i386", sys_pselect6_time64, "<qq", "<II")])
def test_pselect6_timespec_and_mask(abi, call, fmt, words):
    ctx = fake_ctx(abi)
    _, r, w = add_pipe(ctx)
    put_set(ctx, IN, r)
    ctx.write(TV, struct.pack(fmt, 3, 0))
    ctx.write(MASK, struct.pack("<Q", 1 << 9))                # SIGUSR1 ... (bit 9 = signal 10)
    ctx.write(ARGS, struct.pack(words, MASK, 8))
    ctx.thread.sigmask = 1 << 1
    with pytest.raises(WouldBlock):
        call(ctx, r + 1, IN, 0, 0, TV, ARGS)
    assert ctx.thread.sigmask == 1 << 9
    ctx.kernel.clock.advance(10**9)
    ctx.proc.fds.get(w).write(b"x")
    assert call(ctx, r + 1, IN, 0, 0, TV, ARGS) == 1
    assert ctx.thread.sigmask == 1 << 1
    assert struct.unpack(fmt, ctx.read(TV, struct.calcsize(fmt))) == (2, 0)


def test_pselect6_bad_mask_size_is_einval():
    ctx = fake_ctx()
    ctx.write(ARGS, struct.pack("<QQ", MASK, 16))
    with pytest.raises(GuestErrno) as info:
        sys_pselect6(ctx, 0, 0, 0, 0, 0, ARGS)
    assert info.value.errno == E.EINVAL
