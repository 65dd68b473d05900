"""pipe and pipe2 through the syscall layer, over a fake context."""
import struct

import pytest

from kernel_model import errno as E
from kernel_model.errno import GuestErrno
from kernel_model.fs.constants import O_CLOEXEC, O_NONBLOCK, O_RDONLY, O_WRONLY
from kernel_model.fs.stdio import CapturedOutput
from kernel_model.syscalls.impls.pipes import sys_pipe, sys_pipe2

from .fakectx import BASE, READ_ONLY, fake_ctx


def read_fds(ctx, addr=BASE):
    return struct.unpack("<ii", ctx.read(addr, 8))


@pytest.mark.parametrize("abi", ["i386", "x86_64"])
def test_pipe_installs_read_then_write_end_at_the_lowest_fds(abi):
    ctx = fake_ctx(abi)
    ctx.proc.fds.install(CapturedOutput())                  # fd 0 is taken
    assert sys_pipe(ctx, BASE) == 0
    rfd, wfd = read_fds(ctx)
    assert (rfd, wfd) == (1, 2)
    reader, writer = ctx.proc.fds.get(rfd), ctx.proc.fds.get(wfd)
    assert reader.pipe is writer.pipe
    assert (reader.flags, writer.flags) == (O_RDONLY, O_WRONLY)
    assert reader.path == b"pipe:[1001]"                     # from kernel.next_pipe_ino()
    assert ctx.proc.fds.entry(rfd).cloexec is False
    writer.write(b"ping")
    assert ctx.kernel.woken == [reader.pipe]                 # kernel.wakeup is the pipe's
    assert reader.read(4) == b"ping"


def test_pipe2_flags():
    ctx = fake_ctx()
    assert sys_pipe2(ctx, BASE, O_CLOEXEC | O_NONBLOCK) == 0
    rfd, wfd = read_fds(ctx)
    for fd in (rfd, wfd):
        assert ctx.proc.fds.entry(fd).cloexec
        assert ctx.proc.fds.get(fd).flags & O_NONBLOCK
    with pytest.raises(GuestErrno) as info:
        ctx.proc.fds.get(rfd).read(1)
    assert info.value.errno == E.EAGAIN


def test_each_pipe_gets_its_own_inode():
    ctx = fake_ctx()
    sys_pipe(ctx, BASE)
    sys_pipe(ctx, BASE + 8)
    assert ctx.proc.fds.get(read_fds(ctx, BASE)[0]).path == b"pipe:[1001]"
    assert ctx.proc.fds.get(read_fds(ctx, BASE + 8)[0]).path == b"pipe:[1002]"


@pytest.mark.parametrize("flags", [0o100, 1])     # O_CREAT, O_WRONLY (O_DIRECT: packet mode, fs/pipe.py)
def test_pipe2_other_flags_are_einval(flags):
    ctx = fake_ctx()
    with pytest.raises(GuestErrno) as info:
        sys_pipe2(ctx, BASE, flags)
    assert info.value.errno == E.EINVAL
    assert not ctx.proc.fds.entries


@pytest.mark.parametrize("addr", [0, 0x1000, READ_ONLY])
def test_bad_array_is_efault_and_leaves_no_fds(addr):
    ctx = fake_ctx()
    with pytest.raises(GuestErrno) as info:
        sys_pipe(ctx, addr)
    assert info.value.errno == E.EFAULT
    assert not ctx.proc.fds.entries


def test_one_free_fd_is_emfile_and_leaves_it_free():
    ctx = fake_ctx()
    ctx.proc.fds.limit = 1
    with pytest.raises(GuestErrno) as info:
        sys_pipe(ctx, BASE)
    assert info.value.errno == E.EMFILE
    assert not ctx.proc.fds.entries
