"""socket, socketpair, bind, listen, connect, accept4, getsockname, getpeername, shutdown over
a fake context: the errnos Linux gives, in its order, and what each call leaves behind."""
import struct

import pytest

from kernel_model import errno as E
from kernel_model.blocking import WouldBlock
from kernel_model.errno import GuestErrno
from kernel_model.fs.constants import O_NONBLOCK
from kernel_model.fs.pipe import Pipe
from kernel_model.net.constants import (SOCK_CLOEXEC, SOCK_DGRAM, SOCK_NONBLOCK, SOCK_RAW,
                                        SOCK_SEQPACKET, SOCK_STREAM)
from kernel_model.net.unix import CONNECTED, LISTENING, UnixSocket
from kernel_model.syscalls.impls.sockets import (sys_accept, sys_accept4, sys_bind, sys_connect,
                                                 sys_getpeername, sys_getsockname, sys_listen,
                                                 sys_shutdown, sys_socket, sys_socketpair)

from .fakectx import READ_ONLY
from .socketctx import (ADDR, AF_UNIX, LEN, OUT, PID, SV, get_len, pair_fds, put_abstract,
                        put_len, socket_ctx)


def errno_of(call, *args):
    with pytest.raises(GuestErrno) as info:
        call(*args)
    return info.value.errno


def listener(ctx, name=b"srv", backlog=1, kind=SOCK_STREAM):
    fd = sys_socket(ctx, AF_UNIX, kind, 0)
    assert sys_bind(ctx, fd, ADDR, put_abstract(ctx, name)) == 0
    assert sys_listen(ctx, fd, backlog) == 0
    return fd


# ---- socket ----------------------------------------------------------------------------------
def test_socket_types_and_flags():
    ctx = socket_ctx()
    fd = sys_socket(ctx, AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)
    sock = ctx.proc.fds.get(fd)
    assert isinstance(sock, UnixSocket) and sock.type == SOCK_STREAM
    assert sock.flags & O_NONBLOCK and ctx.proc.fds.entry(fd).cloexec
    assert sock.path == b"socket:[1001]" and sock.stat().mode == 0o140777
    raw = ctx.proc.fds.get(sys_socket(ctx, AF_UNIX, SOCK_RAW, 0))
    assert raw.type == SOCK_DGRAM                       # unix_create: SOCK_RAW is a datagram
    assert ctx.proc.fds.get(sys_socket(ctx, AF_UNIX, SOCK_SEQPACKET, 1)).type == SOCK_SEQPACKET


@pytest.mark.parametrize("domain,type_,protocol,errno", [
    (AF_UNIX, SOCK_STREAM | 0x100, 0, E.EINVAL),         # an unknown flag in the type
    (2, SOCK_STREAM, 17, E.EPROTONOSUPPORT),             # AF_INET: TCP, not UDP
    (10, SOCK_SEQPACKET, 0, E.ESOCKTNOSUPPORT),          # AF_INET6
    (2, SOCK_RAW, 0, E.EPROTONOSUPPORT),                 # raw IP: protocol 0 names none
    (3, SOCK_DGRAM, 0, E.EAFNOSUPPORT),                  # AF_AX25
    (16, SOCK_STREAM, 0, E.ESOCKTNOSUPPORT),             # AF_NETLINK: raw or datagram
    (16, SOCK_DGRAM, 9, E.EPROTONOSUPPORT),              # NETLINK_AUDIT: only ROUTE exists
    (AF_UNIX, SOCK_STREAM, 6, E.EPROTONOSUPPORT),
    (AF_UNIX, 4, 0, E.ESOCKTNOSUPPORT),                  # SOCK_RDM
])
def test_socket_refusals(domain, type_, protocol, errno):
    ctx = socket_ctx()
    assert errno_of(sys_socket, ctx, domain, type_, protocol) == errno
    assert not ctx.proc.fds.entries


# ---- socketpair ------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", [SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET])
def test_socketpair_connects_two_sockets(kind):
    ctx = socket_ctx()
    assert sys_socketpair(ctx, AF_UNIX, kind, 0, SV) == 0
    a, b = (ctx.proc.fds.get(fd) for fd in pair_fds(ctx))
    assert pair_fds(ctx) == (0, 1)
    assert a.peer is b and b.peer is a and a.state == b.state == CONNECTED
    assert a.peercred.pid == b.peercred.pid == PID
    assert a.write(b"ping") == 4
    assert b.read(10) == b"ping"


@pytest.mark.parametrize("sv", [0, READ_ONLY])
def test_socketpair_bad_array_is_efault_and_leaves_no_fds(sv):
    ctx = socket_ctx()
    assert errno_of(sys_socketpair, ctx, AF_UNIX, SOCK_STREAM, 0, sv) == E.EFAULT
    assert not ctx.proc.fds.entries


# ---- bind, getsockname -----------------------------------------------------------------------
def test_bind_abstract_name_and_getsockname():
    ctx = socket_ctx()
    fd = sys_socket(ctx, AF_UNIX, SOCK_DGRAM, 0)
    length = put_abstract(ctx, b"name")
    assert sys_bind(ctx, fd, ADDR, length) == 0
    put_len(ctx, 110)
    assert sys_getsockname(ctx, fd, OUT, LEN) == 0
    assert get_len(ctx) == length == 7
    assert ctx.read(OUT, 7) == struct.pack("<H", AF_UNIX) + b"\0name"
    other = sys_socket(ctx, AF_UNIX, SOCK_DGRAM, 0)
    assert errno_of(sys_bind, ctx, other, ADDR, length) == E.EADDRINUSE
    put_abstract(ctx, b"else")
    assert errno_of(sys_bind, ctx, fd, ADDR, length) == E.EINVAL      # bound already


def test_getsockname_cuts_to_the_callers_length_and_stores_the_full_one():
    ctx = socket_ctx()
    fd = sys_socket(ctx, AF_UNIX, SOCK_DGRAM, 0)
    sys_bind(ctx, fd, ADDR, put_abstract(ctx, b"longer-name"))
    ctx.write(OUT, b"\xff" * 16)
    put_len(ctx, 4)
    sys_getsockname(ctx, fd, OUT, LEN)
    assert ctx.read(OUT, 5) == struct.pack("<H", AF_UNIX) + b"\0l" + b"\xff"
    assert get_len(ctx) == 14
    put_len(ctx, -1)
    assert errno_of(sys_getsockname, ctx, fd, OUT, LEN) == E.EINVAL


def test_unbound_and_autobound_names():
    ctx = socket_ctx()
    fd = sys_socket(ctx, AF_UNIX, SOCK_STREAM, 0)
    put_len(ctx, 110)
    sys_getsockname(ctx, fd, OUT, LEN)
    assert get_len(ctx) == 2                          # unnamed: the family only
    ctx.write(ADDR, struct.pack("<H", AF_UNIX))
    assert sys_bind(ctx, fd, ADDR, 2) == 0            # addrlen 2: autobind
    put_len(ctx, 110)
    sys_getsockname(ctx, fd, OUT, LEN)
    assert ctx.read(OUT, get_len(ctx)) == struct.pack("<H", AF_UNIX) + b"\x0000000"


@pytest.mark.parametrize("raw,length,errno", [
    (struct.pack("<H", 2) + b"\0x", 4, E.EINVAL),         # another family
    (struct.pack("<H", AF_UNIX) + b"\0x", 111, E.EINVAL),  # longer than sockaddr_un
    (struct.pack("<H", AF_UNIX) + b"\0x", 200, E.EINVAL),  # longer than sockaddr_storage
    (struct.pack("<H", AF_UNIX) + b"\0x", 1, E.EINVAL),
])
def test_bind_bad_addresses(raw, length, errno):
    ctx = socket_ctx()
    fd = sys_socket(ctx, AF_UNIX, SOCK_STREAM, 0)
    ctx.write(ADDR, raw)
    assert errno_of(sys_bind, ctx, fd, ADDR, length) == errno


def test_calls_on_a_file_that_is_not_a_socket():
    ctx = socket_ctx()
    pipe = Pipe(ctx.kernel.wakeup, 7)
    fd = ctx.proc.fds.install(pipe.read_end())
    for call, args in ((sys_bind, (ADDR, 4)), (sys_listen, (1,)), (sys_connect, (ADDR, 4)),
                       (sys_accept, (0, 0)), (sys_getsockname, (OUT, LEN)),
                       (sys_shutdown, (0,))):
        assert errno_of(call, ctx, fd, *args) == E.ENOTSOCK
        assert errno_of(call, ctx, 99, *args) == E.EBADF


# ---- listen, connect, accept -----------------------------------------------------------------
def test_listen_needs_a_bound_connection_socket():
    ctx = socket_ctx()
    assert errno_of(sys_listen, ctx, sys_socket(ctx, AF_UNIX, SOCK_STREAM, 0), 5) == E.EINVAL
    dgram = sys_socket(ctx, AF_UNIX, SOCK_DGRAM, 0)
    sys_bind(ctx, dgram, ADDR, put_abstract(ctx, b"d"))
    assert errno_of(sys_listen, ctx, dgram, 5) == E.EOPNOTSUPP


def test_connect_then_accept():
    ctx = socket_ctx()
    srv = listener(ctx)
    client = sys_socket(ctx, AF_UNIX, SOCK_STREAM, 0)
    assert sys_connect(ctx, client, ADDR, put_abstract(ctx, b"srv")) == 0
    assert ctx.proc.fds.get(srv).poll_events() & 1               # POLLIN: a connection waits
    put_len(ctx, 110)
    conn = sys_accept4(ctx, srv, OUT, LEN, SOCK_NONBLOCK | SOCK_CLOEXEC)
    assert get_len(ctx) == 2                                      # the client is unnamed
    server_side = ctx.proc.fds.get(conn)
    assert server_side.flags & O_NONBLOCK and ctx.proc.fds.entry(conn).cloexec
    assert server_side.peer is ctx.proc.fds.get(client)
    put_len(ctx, 110)
    sys_getpeername(ctx, client, OUT, LEN)                         # the listener's name
    assert ctx.read(OUT, get_len(ctx)) == struct.pack("<H", AF_UNIX) + b"\0srv"
    assert ctx.proc.fds.get(client).write(b"hi") == 2
    assert server_side.read(5) == b"hi"
    assert errno_of(sys_connect, ctx, client, ADDR, 6) == E.EISCONN


def test_accept_waits_or_eagain():
    ctx = socket_ctx()
    srv = listener(ctx)
    with pytest.raises(WouldBlock) as info:
        sys_accept(ctx, srv, 0, 0)
    assert info.value.channel is ctx.proc.fds.get(srv)
    ctx.proc.fds.get(srv).flags |= O_NONBLOCK
    assert errno_of(sys_accept, ctx, srv, 0, 0) == E.EAGAIN
    assert errno_of(sys_accept4, ctx, srv, 0, 0, 1) == E.EINVAL     # an unknown flag
    unlistened = sys_socket(ctx, AF_UNIX, SOCK_STREAM, 0)
    assert errno_of(sys_accept, ctx, unlistened, 0, 0) == E.EINVAL


def test_connect_refusals():
    ctx = socket_ctx()
    client = sys_socket(ctx, AF_UNIX, SOCK_STREAM, 0)
    assert errno_of(sys_connect, ctx, client, ADDR, put_abstract(ctx, b"nobody")) == \
        E.ECONNREFUSED
    listener(ctx, b"seq", kind=SOCK_SEQPACKET)
    assert errno_of(sys_connect, ctx, client, ADDR, put_abstract(ctx, b"seq")) == E.EPROTOTYPE
    bound = sys_socket(ctx, AF_UNIX, SOCK_STREAM, 0)
    sys_bind(ctx, bound, ADDR, put_abstract(ctx, b"not-listening"))
    assert errno_of(sys_connect, ctx, client, ADDR, put_abstract(ctx, b"not-listening")) == \
        E.ECONNREFUSED


def test_full_backlog_sleeps_or_eagain():
    """unix_recvq_full: a backlog of 1 takes two connections (the test is `>`)."""
    ctx = socket_ctx()
    srv = listener(ctx, backlog=1)
    length = put_abstract(ctx, b"srv")
    for _ in range(2):
        assert sys_connect(ctx, sys_socket(ctx, AF_UNIX, SOCK_STREAM, 0), ADDR, length) == 0
    third = sys_socket(ctx, AF_UNIX, SOCK_STREAM, 0)
    with pytest.raises(WouldBlock):
        sys_connect(ctx, third, ADDR, length)
    ctx.proc.fds.get(third).flags |= O_NONBLOCK
    assert errno_of(sys_connect, ctx, third, ADDR, length) == E.EAGAIN
    sys_accept(ctx, srv, 0, 0)
    assert sys_connect(ctx, third, ADDR, length) == 0


def test_closing_the_listener_resets_connections_never_accepted():
    ctx = socket_ctx()
    srv = listener(ctx)
    client = sys_socket(ctx, AF_UNIX, SOCK_STREAM, 0)
    sys_connect(ctx, client, ADDR, put_abstract(ctx, b"srv"))
    ctx.proc.fds.close(srv)
    sock = ctx.proc.fds.get(client)
    assert errno_of(sock.read, 4) == E.ECONNRESET
    assert sock.read(4) == b""                        # the error is reported once, then EOF
    assert ctx.kernel.unix_names.abstract == {}       # the name went with the socket


def test_getpeername_unconnected_and_shutdown():
    ctx = socket_ctx()
    fd = sys_socket(ctx, AF_UNIX, SOCK_STREAM, 0)
    assert errno_of(sys_getpeername, ctx, fd, OUT, LEN) == E.ENOTCONN
    sys_socketpair(ctx, AF_UNIX, SOCK_STREAM, 0, SV)
    a, b = pair_fds(ctx)
    assert errno_of(sys_shutdown, ctx, a, 3) == E.EINVAL
    assert sys_shutdown(ctx, a, 1) == 0                 # SHUT_WR: b reads EOF
    assert ctx.proc.fds.get(b).read(4) == b""
    assert ctx.proc.fds.get(b).write(b"back") == 4      # the other direction still works
    assert ctx.proc.fds.get(a).read(4) == b"back"
    assert ctx.proc.fds.get(a).state == CONNECTED and ctx.proc.fds.get(a).state != LISTENING


def test_an_o_path_descriptor_is_ebadf():
    """accept03: socket calls do not see an O_PATH file at all (fdget), so EBADF, not
    ENOTSOCK."""
    from types import SimpleNamespace
    ctx = socket_ctx()
    fd = ctx.proc.fds.install(SimpleNamespace(flags=0o10000000, close=lambda: None))
    assert errno_of(sys_accept, ctx, fd, 0, 0) == E.EBADF
