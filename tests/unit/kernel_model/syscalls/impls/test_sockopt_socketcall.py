"""getsockopt/setsockopt at SOL_SOCKET, and i386's socketcall multiplexer, over a fake context."""
import struct

import pytest

from kernel_model import errno as E
from kernel_model.errno import GuestErrno
from kernel_model.net.constants import (SO_ACCEPTCONN, SO_DOMAIN, SO_ERROR, SO_PEERCRED,
                                        SO_RCVBUF, SO_REUSEADDR, SO_SNDBUF, SO_TYPE, SOCK_DGRAM,
                                        SOCK_STREAM, SOL_SOCKET)
from kernel_model.syscalls.impls.socketcall import sys_socketcall
from kernel_model.syscalls.impls.sockets import sys_socket, sys_socketpair
from kernel_model.syscalls.impls.sockopt import sys_getsockopt, sys_setsockopt

from .socketctx import AF_UNIX, DATA, LEN, PID, SV, get_len, pair_fds, put_len, socket_ctx

VAL = DATA
ARGS = DATA + 0x100


def errno_of(call, *args):
    with pytest.raises(GuestErrno) as info:
        call(*args)
    return info.value.errno


def get_int(ctx, fd, name):
    put_len(ctx, 4)
    assert sys_getsockopt(ctx, fd, SOL_SOCKET, name, VAL, LEN) == 0
    return struct.unpack("<i", ctx.read(VAL, 4))[0]


def set_int(ctx, fd, name, value):
    ctx.write(VAL, struct.pack("<i", value))
    return sys_setsockopt(ctx, fd, SOL_SOCKET, name, VAL, 4)


def test_what_the_socket_answers():
    ctx = socket_ctx()
    fd = sys_socket(ctx, AF_UNIX, SOCK_DGRAM, 0)
    assert get_int(ctx, fd, SO_TYPE) == SOCK_DGRAM
    assert get_int(ctx, fd, SO_DOMAIN) == AF_UNIX
    assert get_int(ctx, fd, SO_ACCEPTCONN) == 0
    assert get_int(ctx, fd, SO_ERROR) == 0
    assert get_int(ctx, fd, SO_SNDBUF) == get_int(ctx, fd, SO_RCVBUF) == 212992


def test_buffer_sizes_are_doubled_floored_and_capped():
    ctx = socket_ctx()
    fd = sys_socket(ctx, AF_UNIX, SOCK_STREAM, 0)
    set_int(ctx, fd, SO_SNDBUF, 10000)
    assert get_int(ctx, fd, SO_SNDBUF) == 20000
    set_int(ctx, fd, SO_SNDBUF, 1)
    assert get_int(ctx, fd, SO_SNDBUF) == 4608            # SOCK_MIN_SNDBUF
    set_int(ctx, fd, SO_RCVBUF, 1 << 30)
    assert get_int(ctx, fd, SO_RCVBUF) == 2 * 212992       # rmem_max
    set_int(ctx, fd, SO_REUSEADDR, 5)
    assert get_int(ctx, fd, SO_REUSEADDR) == 1


def test_peercred_of_a_pair_and_of_an_unconnected_socket():
    ctx = socket_ctx()
    sys_socketpair(ctx, AF_UNIX, SOCK_STREAM, 0, SV)
    put_len(ctx, 100)
    sys_getsockopt(ctx, pair_fds(ctx)[0], SOL_SOCKET, SO_PEERCRED, VAL, LEN)
    assert get_len(ctx) == 12 and struct.unpack("<iII", ctx.read(VAL, 12)) == (PID, 0, 0)
    lone = sys_socket(ctx, AF_UNIX, SOCK_STREAM, 0)
    put_len(ctx, 12)
    sys_getsockopt(ctx, lone, SOL_SOCKET, SO_PEERCRED, VAL, LEN)
    assert struct.unpack("<iII", ctx.read(VAL, 12)) == (0, 0xFFFFFFFF, 0xFFFFFFFF)


def test_option_errors():
    ctx = socket_ctx()
    fd = sys_socket(ctx, AF_UNIX, SOCK_STREAM, 0)
    put_len(ctx, 4)
    assert errno_of(sys_getsockopt, ctx, fd, SOL_SOCKET, 999, VAL, LEN) == E.ENOPROTOOPT
    assert errno_of(sys_getsockopt, ctx, fd, 6, 1, VAL, LEN) == E.EOPNOTSUPP     # IPPROTO_TCP
    put_len(ctx, -1)
    assert errno_of(sys_getsockopt, ctx, fd, SOL_SOCKET, SO_TYPE, VAL, LEN) == E.EINVAL
    assert errno_of(sys_setsockopt, ctx, fd, SOL_SOCKET, SO_SNDBUF, VAL, 2) == E.EINVAL
    assert errno_of(sys_setsockopt, ctx, fd, SOL_SOCKET, 999, VAL, 4) == E.ENOPROTOOPT


def test_socketcall_runs_the_named_call():
    ctx = socket_ctx("i386")
    ctx.write(ARGS, struct.pack("<4I", AF_UNIX, SOCK_STREAM, 0, SV))
    assert sys_socketcall(ctx, 8, ARGS) == 0                      # SYS_SOCKETPAIR
    a, b = pair_fds(ctx)
    ctx.write(DATA + 0x200, b"over socketcall")
    ctx.write(ARGS, struct.pack("<4I", a, DATA + 0x200, 15, 0))
    assert sys_socketcall(ctx, 9, ARGS) == 15                     # SYS_SEND
    ctx.write(ARGS, struct.pack("<4I", b, DATA + 0x300, 64, 0))
    assert sys_socketcall(ctx, 10, ARGS) == 15                    # SYS_RECV
    assert ctx.read(DATA + 0x300, 15) == b"over socketcall"
    ctx.write(ARGS, struct.pack("<2I", a, 2))
    assert sys_socketcall(ctx, 13, ARGS) == 0                     # SYS_SHUTDOWN


def test_socketcall_errors():
    ctx = socket_ctx("i386")
    assert errno_of(sys_socketcall, ctx, 0, ARGS) == E.EINVAL
    assert errno_of(sys_socketcall, ctx, 21, ARGS) == E.EINVAL
    assert errno_of(sys_socketcall, ctx, 1, 0x1000) == E.EFAULT
    ctx.write(ARGS, struct.pack("<3I", 3, SOCK_DGRAM, 0))           # AF_AX25
    assert errno_of(sys_socketcall, ctx, 1, ARGS) == E.EAFNOSUPPORT


def test_forced_buffer_sizes_stay_ints():
    """setsockopt04: SO_SNDBUFFORCE of INT_MAX doubles to INT_MAX - 1 (it ended in a kernel
    panic: the doubled value did not fit the int getsockopt returns); a negative one is 0."""
    from kernel_model.net.constants import SO_RCVBUFFORCE, SO_SNDBUFFORCE
    ctx = socket_ctx()
    fd = sys_socket(ctx, AF_UNIX, SOCK_STREAM, 0)
    set_int(ctx, fd, SO_SNDBUFFORCE, 0x7FFFFFFF)
    assert get_int(ctx, fd, SO_SNDBUF) == 0x7FFFFFFE
    set_int(ctx, fd, SO_RCVBUFFORCE, -1)
    assert get_int(ctx, fd, SO_RCVBUF) == 2304
    set_int(ctx, fd, SO_SNDBUF, -1)                      # unsigned: capped at wmem_max
    assert get_int(ctx, fd, SO_SNDBUF) == 2 * 212992
