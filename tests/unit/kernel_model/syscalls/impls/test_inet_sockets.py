"""TCP and UDP on the sandbox's loopback network over a fake context: ports (given, taken,
ephemeral and deterministic), 127.0.0.1/0.0.0.0/::1 reaching the sandbox and every other
host ENETUNREACH with a note, EINPROGRESS of a non-blocking connect, and the errnos where TCP
and UDP differ from AF_UNIX."""
import struct

import pytest

from kernel_model import errno as E
from kernel_model.errno import GuestErrno
from kernel_model.fs.pipe import BrokenPipe
from kernel_model.net.constants import SOCK_DGRAM, SOCK_NONBLOCK, SOCK_STREAM
from kernel_model.syscalls.impls.sockets import (sys_accept, sys_bind, sys_connect,
                                                 sys_getpeername, sys_getsockname, sys_listen,
                                                 sys_shutdown, sys_socket, sys_socketpair)
from kernel_model.syscalls.impls.sockmsg import sys_recvfrom, sys_sendto

from .socketctx import ADDR, DATA, LEN, OUT, SV, get_len, put_len, socket_ctx

AF_INET, AF_INET6 = 2, 10
LOOPBACK, ANY, ELSEWHERE = bytes([127, 0, 0, 1]), bytes(4), bytes([10, 1, 2, 3])


def errno_of(call, *args):
    with pytest.raises(GuestErrno) as info:
        call(*args)
    return info.value.errno


def put_in(ctx, host: bytes, port: int, at: int = ADDR) -> int:
    ctx.write(at, struct.pack("<H", AF_INET) + struct.pack(">H", port) + host + bytes(8))
    return 16


def name_of(ctx, call, fd) -> tuple[bytes, int]:
    put_len(ctx, 16)
    call(ctx, fd, OUT, LEN)
    raw = ctx.read(OUT, get_len(ctx))
    return raw[4:8], struct.unpack(">H", raw[2:4])[0]


def tcp_server(ctx, host=ANY, port=8080):
    fd = sys_socket(ctx, AF_INET, SOCK_STREAM, 0)
    assert sys_bind(ctx, fd, ADDR, put_in(ctx, host, port)) == 0
    assert sys_listen(ctx, fd, 8) == 0
    return fd


def test_tcp_connect_accept_and_names():
    ctx = socket_ctx()
    srv = tcp_server(ctx)
    client = sys_socket(ctx, AF_INET, SOCK_STREAM, 6)
    assert sys_connect(ctx, client, ADDR, put_in(ctx, LOOPBACK, 8080)) == 0
    conn = sys_accept(ctx, srv, 0, 0)
    assert name_of(ctx, sys_getsockname, client) == (LOOPBACK, 32768)      # ephemeral, first
    assert name_of(ctx, sys_getpeername, client) == (LOOPBACK, 8080)
    assert name_of(ctx, sys_getpeername, conn) == (LOOPBACK, 32768)
    assert name_of(ctx, sys_getsockname, srv) == (ANY, 8080)
    ctx.write(DATA, b"over tcp")
    assert sys_sendto(ctx, client, DATA, 8, 0, 0, 0) == 8
    put_len(ctx, 16)
    assert sys_recvfrom(ctx, conn, DATA + 0x100, 64, 0, OUT, LEN) == 8
    assert get_len(ctx) == 0                    # TCP reports no source address


def test_ports_in_use_and_unreachable_hosts():
    ctx = socket_ctx()
    tcp_server(ctx, port=9000)
    other = sys_socket(ctx, AF_INET, SOCK_STREAM, 0)
    assert errno_of(sys_bind, ctx, other, ADDR, put_in(ctx, LOOPBACK, 9000)) == E.EADDRINUSE
    assert errno_of(sys_bind, ctx, other, ADDR, put_in(ctx, ELSEWHERE, 1)) == E.EADDRNOTAVAIL
    assert errno_of(sys_connect, ctx, other, ADDR, put_in(ctx, LOOPBACK, 9001)) == \
        E.ECONNREFUSED
    assert errno_of(sys_connect, ctx, other, ADDR, put_in(ctx, ELSEWHERE, 80)) == E.ENETUNREACH
    assert errno_of(sys_connect, ctx, other, ADDR, put_in(ctx, ELSEWHERE, 81)) == E.ENETUNREACH
    assert ctx.kernel.reports == ["the sandbox's network is loopback only: 10.1.2.3:80 is "
                                  "unreachable (ENETUNREACH)"]
    assert errno_of(sys_bind, ctx, other, ADDR, 8) == E.EINVAL                 # too short
    assert errno_of(sys_socketpair, ctx, AF_INET, SOCK_STREAM, 0, SV) == E.EOPNOTSUPP


def test_nonblocking_connect_is_in_progress_and_made():
    ctx = socket_ctx()
    srv = tcp_server(ctx)
    client = sys_socket(ctx, AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0)
    assert errno_of(sys_connect, ctx, client, ADDR, put_in(ctx, LOOPBACK, 8080)) == E.EINPROGRESS
    assert ctx.proc.fds.get(client).poll_events() & 4                          # POLLOUT
    assert errno_of(sys_connect, ctx, client, ADDR, 16) == E.EISCONN
    assert sys_accept(ctx, srv, 0, 0) >= 0


def test_tcp_errors_of_a_socket_never_connected():
    ctx = socket_ctx()
    fd = sys_socket(ctx, AF_INET, SOCK_STREAM, 0)
    assert errno_of(sys_recvfrom, ctx, fd, DATA, 4, 0, 0, 0) == E.ENOTCONN
    assert errno_of(sys_shutdown, ctx, fd, 2) == E.ENOTCONN
    assert errno_of(sys_getpeername, ctx, fd, OUT, LEN) == E.ENOTCONN
    with pytest.raises(BrokenPipe):
        sys_sendto(ctx, fd, DATA, 1, 0, 0, 0)                                 # EPIPE, SIGPIPE


def test_udp_datagrams_sources_and_drops():
    ctx = socket_ctx()
    rx = sys_socket(ctx, AF_INET, SOCK_DGRAM, 0)
    sys_bind(ctx, rx, ADDR, put_in(ctx, LOOPBACK, 5353))
    tx = sys_socket(ctx, AF_INET, SOCK_DGRAM, 17)
    ctx.write(DATA, b"hello")
    assert sys_sendto(ctx, tx, DATA, 5, 0, ADDR, 16) == 5
    put_len(ctx, 16)
    assert sys_recvfrom(ctx, rx, DATA + 0x100, 64, 0, OUT, LEN) == 5
    raw = ctx.read(OUT, get_len(ctx))
    assert (raw[4:8], struct.unpack(">H", raw[2:4])[0]) == (LOOPBACK, 32768)
    assert errno_of(sys_sendto, ctx, tx, DATA, 5, 0, 0, 0) == E.EDESTADDRREQ
    # to a port nobody holds: dropped; a connected sender hears ECONNREFUSED next
    assert sys_connect(ctx, tx, ADDR, put_in(ctx, LOOPBACK, 1)) == 0
    assert sys_sendto(ctx, tx, DATA, 5, 0, 0, 0) == 5
    assert errno_of(sys_recvfrom, ctx, tx, DATA, 5, 0x40, 0, 0) == E.ECONNREFUSED
    assert errno_of(sys_recvfrom, ctx, rx, DATA, 5, 0x40, 0, 0) == E.EAGAIN


def test_ipv6_loopback():
    ctx = socket_ctx()
    srv = sys_socket(ctx, AF_INET6, SOCK_STREAM, 0)
    six = struct.pack("<H", AF_INET6) + struct.pack(">HI", 7000, 0) + bytes(15) + b"\x01" + \
        bytes(4)
    ctx.write(ADDR, six)
    assert sys_bind(ctx, srv, ADDR, 28) == 0
    sys_listen(ctx, srv, 1)
    client = sys_socket(ctx, AF_INET6, SOCK_STREAM, 0)
    assert sys_connect(ctx, client, ADDR, 28) == 0
    put_len(ctx, 28)
    sys_getpeername(ctx, client, OUT, LEN)
    assert get_len(ctx) == 28 and ctx.read(OUT, 28) == six
    assert errno_of(sys_bind, ctx, client, ADDR, 16) == E.EINVAL              # short for v6


def test_first_write_after_the_peer_closed_succeeds_the_next_is_epipe():
    ctx = socket_ctx()
    srv = tcp_server(ctx)
    client = sys_socket(ctx, AF_INET, SOCK_STREAM, 0)
    sys_connect(ctx, client, ADDR, put_in(ctx, LOOPBACK, 8080))
    ctx.proc.fds.close(sys_accept(ctx, srv, 0, 0))
    assert sys_sendto(ctx, client, DATA, 4, 0, 0, 0) == 4             # CLOSE_WAIT
    with pytest.raises(BrokenPipe):
        sys_sendto(ctx, client, DATA, 4, 0, 0, 0)
    assert sys_recvfrom(ctx, client, DATA, 4, 0, 0, 0) == 0            # EOF


def test_socketpair_checks_the_protocol_before_refusing_the_family():
    """socketpair01: AF_INET with a protocol that does not fit the type is EPROTONOSUPPORT
    (the sockets are created first), with one that fits EOPNOTSUPP."""
    ctx = socket_ctx()
    assert errno_of(sys_socketpair, ctx, AF_INET, SOCK_DGRAM, 6, SV) == E.EPROTONOSUPPORT
    assert errno_of(sys_socketpair, ctx, AF_INET, SOCK_STREAM, 17, SV) == E.EPROTONOSUPPORT
    assert errno_of(sys_socketpair, ctx, AF_INET, SOCK_DGRAM, 17, SV) == E.EOPNOTSUPP
    assert sys_socket(ctx, AF_INET, SOCK_DGRAM, 136) >= 0              # UDP-Lite


def test_ltp_errno_orders():
    """LTP's accept01, recvfrom01, recv01, sendto01, getsockname01: the state is refused
    before a bad address is looked at, a TCP recvfrom leaves a bad address pointer alone,
    out-of-band and error-queue reads of data that never comes, MSG_OOB on UDP."""
    from kernel_model.net.constants import MSG_ERRQUEUE, MSG_OOB
    ctx = socket_ctx()
    fd = sys_socket(ctx, AF_INET, SOCK_STREAM, 0)
    assert errno_of(sys_accept, ctx, fd, 3, LEN) == E.EINVAL          # not listening
    put_len(ctx, 16)
    assert errno_of(sys_getsockname, ctx, fd, 0, LEN) == E.EFAULT     # NULL address
    srv = tcp_server(ctx)
    client = sys_socket(ctx, AF_INET, SOCK_STREAM, 0)
    sys_connect(ctx, client, ADDR, put_in(ctx, LOOPBACK, 8080))
    conn = sys_accept(ctx, srv, 0, 0)
    sys_sendto(ctx, client, DATA, 4, 0, 0, 0)
    put_len(ctx, 16)
    assert sys_recvfrom(ctx, conn, DATA, 4, 0, 0xFFFFFFFFFFFF0000, LEN) == 4
    assert get_len(ctx) == 0
    assert errno_of(sys_recvfrom, ctx, conn, DATA, 4, MSG_OOB, 0, 0) == E.EINVAL
    assert errno_of(sys_recvfrom, ctx, conn, DATA, 4, MSG_ERRQUEUE, 0, 0) == E.EAGAIN
    udp = sys_socket(ctx, AF_INET, SOCK_DGRAM, 0)
    assert errno_of(sys_sendto, ctx, udp, DATA, 1, MSG_OOB, ADDR, 16) == E.EOPNOTSUPP


def test_msg_more_holds_the_bytes_until_the_last_send():
    """send02: after send(MSG_MORE) the receiver has nothing; the next send delivers all."""
    from kernel_model.net.constants import MSG_MORE
    ctx = socket_ctx()
    rx = sys_socket(ctx, AF_INET, SOCK_DGRAM, 0)
    sys_bind(ctx, rx, ADDR, put_in(ctx, LOOPBACK, 4000))
    tx = sys_socket(ctx, AF_INET, SOCK_DGRAM, 0)
    ctx.write(DATA, b"abcdef")
    assert sys_sendto(ctx, tx, DATA, 3, MSG_MORE, ADDR, 16) == 3
    assert errno_of(sys_recvfrom, ctx, rx, DATA + 0x100, 64, 0x40, 0, 0) == E.EAGAIN
    assert sys_sendto(ctx, tx, DATA + 3, 3, 0, ADDR, 16) == 3
    assert sys_recvfrom(ctx, rx, DATA + 0x100, 64, 0, 0, 0) == 6
    assert ctx.read(DATA + 0x100, 6) == b"abcdef"


def test_protocol_level_options():
    """getsockopt01/setsockopt01: an unknown level is EOPNOTSUPP to get and ENOPROTOOPT to
    set, an unknown option of a known level ENOPROTOOPT; known ones have Linux's defaults."""
    from kernel_model.syscalls.impls.sockopt import sys_getsockopt, sys_setsockopt
    ctx = socket_ctx()
    fd = sys_socket(ctx, AF_INET, SOCK_STREAM, 0)
    put_len(ctx, 4)
    for level, name, errno in ((500, 10, E.EOPNOTSUPP), (17, 10, E.EOPNOTSUPP),
                               (0, -1, E.ENOPROTOOPT), (6, -1, E.ENOPROTOOPT)):
        assert errno_of(sys_getsockopt, ctx, fd, level, name, DATA, LEN) == errno
    ctx.write(DATA, struct.pack("<i", 1))
    for level, name in ((500, 10), (17, 10), (0, -1), (6, -1)):
        assert errno_of(sys_setsockopt, ctx, fd, level, name, DATA, 4) == E.ENOPROTOOPT
    assert sys_getsockopt(ctx, fd, 0, 2, DATA + 8, LEN) == 0                # IP_TTL
    assert struct.unpack("<i", ctx.read(DATA + 8, 4))[0] == 64
    assert sys_setsockopt(ctx, fd, 6, 1, DATA, 4) == 0                      # TCP_NODELAY
    put_len(ctx, 4)
    sys_getsockopt(ctx, fd, 6, 1, DATA + 8, LEN)
    assert struct.unpack("<i", ctx.read(DATA + 8, 4))[0] == 1


@pytest.mark.parametrize("abi", ["i386", "x86_64"])
def test_multicast_membership_is_not_copied_to_an_accepted_socket(abi):
    """accept02 (CVE-2017-8890): the listener joined a group; the accepted socket is in none."""
    from kernel_model.syscalls.impls.sockopt import sys_setsockopt
    ctx = socket_ctx(abi)
    group_req = struct.pack("<I", 1) + bytes(ctx.word - 4) + struct.pack("<H", AF_INET) + \
        bytes(2) + bytes([224, 0, 0, 1]) + bytes(120)
    ctx.write(DATA + 0x400, group_req)
    srv = sys_socket(ctx, AF_INET, SOCK_STREAM, 0)
    assert sys_setsockopt(ctx, srv, 0, 42, DATA + 0x400, len(group_req)) == 0   # JOIN
    assert errno_of(sys_setsockopt, ctx, srv, 0, 42, DATA + 0x400, len(group_req)) == \
        E.EADDRINUSE
    sys_bind(ctx, srv, ADDR, put_in(ctx, ANY, 7777))
    sys_listen(ctx, srv, 1)
    client = sys_socket(ctx, AF_INET, SOCK_STREAM, 0)
    sys_connect(ctx, client, ADDR, put_in(ctx, LOOPBACK, 7777))
    conn = sys_accept(ctx, srv, 0, 0)
    assert errno_of(sys_setsockopt, ctx, conn, 0, 45, DATA + 0x400, len(group_req)) == \
        E.EADDRNOTAVAIL                                                           # LEAVE
    assert sys_setsockopt(ctx, srv, 0, 45, DATA + 0x400, len(group_req)) == 0


def test_a_privileged_port_needs_cap_net_bind_service():
    """__inet_bind (LTP bind02): a port under 1024 without CAP_NET_BIND_SERVICE is EACCES,
    checked after the address (EADDRNOTAVAIL) and before a second bind (EINVAL); port 0 and
    ports from 1024 are anyone's; IPv6 alike (inet6_bind). Checked natively as euid 65534."""
    ctx = socket_ctx()
    ctx.proc.creds = ctx.proc.creds.with_ids(euid=65534)     # root's capabilities dropped
    assert not ctx.proc.creds.capable(10)
    tcp = sys_socket(ctx, AF_INET, SOCK_STREAM, 0)
    assert errno_of(sys_bind, ctx, tcp, ADDR, put_in(ctx, ANY, 463)) == E.EACCES
    assert errno_of(sys_bind, ctx, tcp, ADDR, put_in(ctx, ELSEWHERE, 463)) == E.EADDRNOTAVAIL
    v6 = sys_socket(ctx, AF_INET6, SOCK_STREAM, 0)
    ctx.write(ADDR, struct.pack("<H", AF_INET6) + struct.pack(">H", 1023) + bytes(24))
    assert errno_of(sys_bind, ctx, v6, ADDR, 28) == E.EACCES
    assert sys_bind(ctx, tcp, ADDR, put_in(ctx, ANY, 1024)) == 0
    assert errno_of(sys_bind, ctx, tcp, ADDR, put_in(ctx, ANY, 463)) == E.EACCES
    assert sys_bind(ctx, sys_socket(ctx, AF_INET, SOCK_STREAM, 0), ADDR, put_in(ctx, ANY, 0)) == 0
    ctx.proc.creds = ctx.proc.creds.with_ids(euid=0)          # root again: allowed
    root_tcp = sys_socket(ctx, AF_INET, SOCK_STREAM, 0)
    assert sys_bind(ctx, root_tcp, ADDR, put_in(ctx, ANY, 463)) == 0
