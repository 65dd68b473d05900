"""sendto/recvfrom/sendmsg/recvmsg over a fake context: struct msghdr and control messages in
both ABIs' layouts, passed files, credentials, truncation, peeking, and the errors of a
connection that is gone."""
import struct

import pytest

from kernel_model import errno as E
from kernel_model.blocking import WouldBlock
from kernel_model.errno import GuestErrno
from kernel_model.fs.pipe import BrokenPipe, Pipe
from kernel_model.net.constants import (MSG_CMSG_CLOEXEC, MSG_CTRUNC, MSG_DONTWAIT,
                                        MSG_NOSIGNAL, MSG_PEEK, MSG_TRUNC, MSG_WAITALL,
                                        SCM_CREDENTIALS, SCM_RIGHTS, SO_PASSCRED, SOCK_DGRAM,
                                        SOCK_SEQPACKET, SOCK_STREAM, SOL_SOCKET)
from kernel_model.syscalls.impls.sockets import sys_bind, sys_socket, sys_socketpair
from kernel_model.syscalls.impls.sockmsg import (sys_recvfrom, sys_recvmsg, sys_sendmsg,
                                                 sys_sendto)
from kernel_model.syscalls.impls.sockopt import sys_setsockopt

from .socketctx import (ADDR, AF_UNIX, DATA, LEN, OUT, PID, SV, get_len, pair_fds,
                        put_abstract, put_len, socket_ctx)

MSG = DATA + 0x800          # struct msghdr
IOV = DATA + 0x900          # struct iovec[2]
CONTROL = DATA + 0xA00      # control buffer
BUF = DATA + 0xC00          # payload
ABIS = ["i386", "x86_64"]


def errno_of(call, *args):
    with pytest.raises(GuestErrno) as info:
        call(*args)
    return info.value.errno


def pair(ctx, kind=SOCK_STREAM):
    sys_socketpair(ctx, AF_UNIX, kind, 0, SV)
    return pair_fds(ctx)


def put_msghdr(ctx, iov_lengths, *, control=b"", controllen=None, name=0, namelen=0):
    """A msghdr whose iovecs cut BUF into `iov_lengths`, with `control` at CONTROL."""
    word = "I" if ctx.word == 4 else "Q"
    at = BUF
    iov = b""
    for length in iov_lengths:
        iov += struct.pack(f"<{word}{word}", at, length)
        at += length
    ctx.write(IOV, iov)
    if control:
        ctx.write(CONTROL, control)
    controllen = len(control) if controllen is None else controllen
    fmt = "<IiIIIIi" if ctx.word == 4 else "<QixxxxQQQQixxxx"
    ctx.write(MSG, struct.pack(fmt, name, namelen, IOV, len(iov_lengths),
                               CONTROL if controllen else 0, controllen, 0))


def read_msghdr(ctx):
    fmt = "<IiIIIIi" if ctx.word == 4 else "<QixxxxQQQQixxxx"
    name, namelen, _, _, _, controllen, flags = struct.unpack(fmt, ctx.read(MSG,
                                                              struct.calcsize(fmt)))
    return namelen, controllen, flags


def cmsg(ctx, kind, payload):
    header = struct.pack("<Iii" if ctx.word == 4 else "<Qii", 0, SOL_SOCKET, kind)
    length = len(header) + len(payload)
    message = struct.pack("<Iii" if ctx.word == 4 else "<Qii", length, SOL_SOCKET, kind) + payload
    return message + bytes(-length % ctx.word)


def parse_cmsgs(ctx, raw):
    size = 12 if ctx.word == 4 else 16
    out, at = [], 0
    while at + size <= len(raw):
        length, level, kind = struct.unpack_from("<Iii" if ctx.word == 4 else "<Qii", raw, at)
        out.append((level, kind, raw[at + size:at + length]))
        at += -(-length // ctx.word) * ctx.word
    return out


@pytest.mark.parametrize("abi", ABIS)
def test_scm_rights_passes_an_open_file(abi):
    ctx = socket_ctx(abi)
    a, b = pair(ctx, SOCK_DGRAM)
    pipe = Pipe(ctx.kernel.wakeup, 9)
    rfd, wfd = ctx.proc.fds.install(pipe.read_end()), ctx.proc.fds.install(pipe.write_end())
    ctx.write(BUF, b"fd!")
    put_msghdr(ctx, [3], control=cmsg(ctx, SCM_RIGHTS, struct.pack("<i", rfd)))
    assert sys_sendmsg(ctx, a, MSG, 0) == 3
    ctx.proc.fds.close(rfd)                          # in flight: the message keeps it open
    ctx.proc.fds.get(wfd).write(b"via the passed fd")
    put_msghdr(ctx, [2, 8], controllen=64)
    assert sys_recvmsg(ctx, b, MSG, MSG_CMSG_CLOEXEC) == 3
    assert ctx.read(BUF, 3) == b"fd!"
    namelen, controllen, flags = read_msghdr(ctx)
    [(level, kind, payload)] = parse_cmsgs(ctx, ctx.read(CONTROL, controllen))
    assert (level, kind, flags, namelen) == (SOL_SOCKET, SCM_RIGHTS, MSG_CMSG_CLOEXEC, 0)
    new_fd = struct.unpack("<i", payload)[0]
    assert ctx.proc.fds.entry(new_fd).cloexec
    assert ctx.proc.fds.get(new_fd).read(64) == b"via the passed fd"
    ctx.proc.fds.close(new_fd)
    assert pipe.readers == 0                         # the last reference went with the fd


@pytest.mark.parametrize("abi", ABIS)
def test_msg_flags_echo_msg_cmsg_cloexec_only(abi):
    """____sys_recvmsg (net/socket.c) starts msg_flags from the call's MSG_CMSG_CLOEXEC (and
    MSG_CMSG_COMPAT, never shown), then the protocol adds MSG_TRUNC/MSG_CTRUNC: strace shows
    msg_flags=MSG_CMSG_CLOEXEC after recvmsg(..., MSG_CMSG_CLOEXEC)."""
    ctx = socket_ctx(abi)
    a, b = pair(ctx, SOCK_DGRAM)
    for flags, shown in ((MSG_CMSG_CLOEXEC, MSG_CMSG_CLOEXEC), (MSG_DONTWAIT, 0),
                         (MSG_CMSG_CLOEXEC | MSG_DONTWAIT, MSG_CMSG_CLOEXEC)):
        ctx.write(BUF, b"four")
        put_msghdr(ctx, [4])
        assert sys_sendmsg(ctx, a, MSG, 0) == 4
        put_msghdr(ctx, [2])
        assert sys_recvmsg(ctx, b, MSG, flags) == 2
        assert read_msghdr(ctx)[2] == shown | MSG_TRUNC


@pytest.mark.parametrize("abi", ABIS)
def test_control_buffer_too_small_is_ctrunc_and_the_file_closes(abi):
    ctx = socket_ctx(abi)
    a, b = pair(ctx, SOCK_STREAM)
    pipe = Pipe(ctx.kernel.wakeup, 9)
    rfd = ctx.proc.fds.install(pipe.read_end())
    ctx.write(BUF, b"x")
    put_msghdr(ctx, [1], control=cmsg(ctx, SCM_RIGHTS, struct.pack("<i", rfd)))
    sys_sendmsg(ctx, a, MSG, 0)
    ctx.proc.fds.close(rfd)
    put_msghdr(ctx, [1], controllen=4)               # not even a cmsghdr
    assert sys_recvmsg(ctx, b, MSG, 0) == 1
    assert read_msghdr(ctx)[1:] == (0, MSG_CTRUNC)
    assert pipe.readers == 0


@pytest.mark.parametrize("abi", ABIS)
def test_credentials_when_asked(abi):
    ctx = socket_ctx(abi)
    a, b = pair(ctx, SOCK_DGRAM)
    ctx.write(DATA, struct.pack("<i", 1))
    sys_setsockopt(ctx, b, SOL_SOCKET, SO_PASSCRED, DATA, 4)
    ctx.write(BUF, b"c")
    put_msghdr(ctx, [1])
    sys_sendmsg(ctx, a, MSG, 0)
    put_msghdr(ctx, [4], controllen=64)
    sys_recvmsg(ctx, b, MSG, 0)
    controllen = read_msghdr(ctx)[1]
    [(_, kind, payload)] = parse_cmsgs(ctx, ctx.read(CONTROL, controllen))
    assert kind == SCM_CREDENTIALS and struct.unpack("<iII", payload) == (PID, 0, 0)


def test_bad_control_messages():
    ctx = socket_ctx()
    a, _ = pair(ctx, SOCK_DGRAM)
    ctx.write(BUF, b"x")
    put_msghdr(ctx, [1], control=cmsg(ctx, SCM_RIGHTS, struct.pack("<i", 77)))
    assert errno_of(sys_sendmsg, ctx, a, MSG, 0) == E.EBADF
    put_msghdr(ctx, [1], control=cmsg(ctx, SCM_RIGHTS, b""))
    assert errno_of(sys_sendmsg, ctx, a, MSG, 0) == E.EINVAL
    put_msghdr(ctx, [1], control=cmsg(ctx, 99, b"1234"))
    assert errno_of(sys_sendmsg, ctx, a, MSG, 0) == E.EINVAL


def test_datagrams_keep_boundaries_truncate_and_peek():
    ctx = socket_ctx()
    a, b = pair(ctx, SOCK_DGRAM)
    for text in (b"0123456789", b"ab"):
        ctx.write(BUF, text)
        assert sys_sendto(ctx, a, BUF, len(text), 0, 0, 0) == len(text)
    assert sys_recvfrom(ctx, b, DATA, 4, MSG_PEEK | MSG_TRUNC, 0, 0) == 10
    put_msghdr(ctx, [4])
    assert sys_recvmsg(ctx, b, MSG, 0) == 4
    assert read_msghdr(ctx)[2] == MSG_TRUNC and ctx.read(BUF, 4) == b"0123"
    assert sys_recvfrom(ctx, b, DATA, 4, 0, 0, 0) == 2
    assert errno_of(sys_recvfrom, ctx, b, DATA, 4, MSG_DONTWAIT, 0, 0) == E.EAGAIN
    with pytest.raises(WouldBlock):
        sys_recvfrom(ctx, b, DATA, 4, 0, 0, 0)


def test_recvfrom_names_a_bound_sender_and_sendto_reaches_a_name():
    ctx = socket_ctx()
    receiver = sys_socket(ctx, AF_UNIX, SOCK_DGRAM, 0)
    sys_bind(ctx, receiver, ADDR, put_abstract(ctx, b"rx"))
    sender = sys_socket(ctx, AF_UNIX, SOCK_DGRAM, 0)
    sys_bind(ctx, sender, ADDR + 0x40, put_abstract(ctx, b"tx", ADDR + 0x40))
    ctx.write(BUF, b"hey")
    assert sys_sendto(ctx, sender, BUF, 3, 0, ADDR, 5) == 3
    assert errno_of(sys_sendto, ctx, sender, BUF, 3, 0, 0, 0) == E.ENOTCONN
    put_len(ctx, 110)
    assert sys_recvfrom(ctx, receiver, DATA, 10, 0, OUT, LEN) == 3
    assert ctx.read(OUT, get_len(ctx)) == struct.pack("<H", AF_UNIX) + b"\0tx"
    stream = sys_socket(ctx, AF_UNIX, SOCK_STREAM, 0)
    assert errno_of(sys_sendto, ctx, stream, BUF, 3, 0, ADDR, 5) == E.EOPNOTSUPP


def test_dgram_queue_limit_of_a_receiver_not_connected_back():
    ctx = socket_ctx()
    receiver = sys_socket(ctx, AF_UNIX, SOCK_DGRAM, 0)
    sys_bind(ctx, receiver, ADDR, put_abstract(ctx, b"rx"))
    sender = sys_socket(ctx, AF_UNIX, SOCK_DGRAM, 0)
    ctx.write(BUF, b"m")
    sent = 0
    with pytest.raises(GuestErrno) as info:
        while sent < 100:
            sys_sendto(ctx, sender, BUF, 1, MSG_DONTWAIT, ADDR, 5)
            sent += 1
    assert info.value.errno == E.EAGAIN and sent == 11     # max_dgram_qlen 10, test is `>`


def test_socketpair_dgram_is_limited_by_the_send_buffer():
    """278 one-byte datagrams fit in a socketpair on Linux (truesize 768 of 212992)."""
    ctx = socket_ctx()
    a, _ = pair(ctx, SOCK_DGRAM)
    sent = 0
    with pytest.raises(GuestErrno):
        while sent < 1000:
            sys_sendto(ctx, a, BUF, 1, MSG_DONTWAIT, 0, 0)
            sent += 1
    assert sent == 278


def _sends_until_full(ctx, fd, size: int) -> list[int]:
    results = []
    with pytest.raises(GuestErrno) as info:
        while len(results) < 100_000:
            results.append(sys_sendto(ctx, fd, BUF, size, MSG_DONTWAIT, 0, 0))
    assert info.value.errno == E.EAGAIN
    return results


@pytest.mark.parametrize("size, sends, total", [(4096, 44, 180224), (1, 278, 278),
                                                (100, 278, 27800), (3000, 49, 147000),
                                                (8192, 24, 196608)])
def test_socketpair_stream_is_limited_by_the_true_size_of_its_buffers(size, sends, total):
    """Measured natively on the reference host: nonblocking sends of `size` bytes on a fresh
    socketpair until EAGAIN (each sk_buff costs its truesize, kernel_model/net/truesize.py,
    and one more goes while the charge is below SO_SNDBUF; a large send stops half-way)."""
    ctx = socket_ctx()
    a, _ = pair(ctx, SOCK_STREAM)
    results = _sends_until_full(ctx, a, size)
    assert (len(results), sum(results)) == (sends, total)


def test_reading_a_whole_piece_gives_its_sender_the_room_back():
    ctx = socket_ctx()
    a, b = pair(ctx, SOCK_STREAM)
    _sends_until_full(ctx, a, 4096)
    assert sys_recvfrom(ctx, b, DATA, 4095, 0, 0, 0) == 4095    # a piece not yet consumed
    assert errno_of(sys_sendto, ctx, a, BUF, 4096, MSG_DONTWAIT, 0, 0) == E.EAGAIN
    assert sys_recvfrom(ctx, b, DATA, 1, 0, 0, 0) == 1          # consumed: 4864 back
    assert sys_sendto(ctx, a, BUF, 4096, MSG_DONTWAIT, 0, 0) == 4096
    assert errno_of(sys_sendto, ctx, a, BUF, 4096, MSG_DONTWAIT, 0, 0) == E.EAGAIN


def test_stream_epipe_sigpipe_and_nosignal():
    ctx = socket_ctx()
    a, b = pair(ctx)
    ctx.proc.fds.close(b)
    with pytest.raises(BrokenPipe):                  # the dispatcher adds SIGPIPE
        sys_sendto(ctx, a, BUF, 1, 0, 0, 0)
    with pytest.raises(GuestErrno) as info:
        sys_sendto(ctx, a, BUF, 1, MSG_NOSIGNAL, 0, 0)
    assert info.value.errno == E.EPIPE and not isinstance(info.value, BrokenPipe)
    assert sys_recvfrom(ctx, a, DATA, 4, 0, 0, 0) == 0          # EOF


def test_seqpacket_peer_gone_is_epipe_without_signal():
    ctx = socket_ctx()
    a, b = pair(ctx, SOCK_SEQPACKET)
    ctx.proc.fds.close(b)
    with pytest.raises(GuestErrno) as info:
        sys_sendto(ctx, a, BUF, 1, 0, 0, 0)
    assert info.value.errno == E.EPIPE and not isinstance(info.value, BrokenPipe)


def test_unread_data_resets_the_peer():
    ctx = socket_ctx()
    a, b = pair(ctx)
    sys_sendto(ctx, a, BUF, 3, 0, 0, 0)
    ctx.proc.fds.close(b)                          # closes with 3 bytes unread
    assert errno_of(sys_recvfrom, ctx, a, DATA, 4, 0, 0, 0) == E.ECONNRESET


def test_stream_reads_join_segments_and_waitall_waits():
    ctx = socket_ctx()
    a, b = pair(ctx)
    for text in (b"abc", b"def"):
        ctx.write(BUF, text)
        sys_sendto(ctx, a, BUF, 3, 0, 0, 0)
    with pytest.raises(WouldBlock):
        sys_recvfrom(ctx, b, DATA, 8, MSG_WAITALL, 0, 0)
    assert sys_recvfrom(ctx, b, DATA, 8, MSG_PEEK, 0, 0) == 6
    assert sys_recvfrom(ctx, b, DATA, 5, 0, 0, 0) == 5 and ctx.read(DATA, 5) == b"abcde"
    ctx.proc.fds.close(a)
    assert sys_recvfrom(ctx, b, DATA, 8, MSG_WAITALL, 0, 0) == 1     # EOF ends the wait


def test_recv_on_unconnected_or_listening_stream_is_einval():
    ctx = socket_ctx()
    fd = sys_socket(ctx, AF_UNIX, SOCK_STREAM, 0)
    assert errno_of(sys_recvfrom, ctx, fd, DATA, 4, 0, 0, 0) == E.EINVAL
    seq = sys_socket(ctx, AF_UNIX, SOCK_SEQPACKET, 0)
    assert errno_of(sys_recvfrom, ctx, seq, DATA, 4, 0, 0, 0) == E.ENOTCONN


def test_bad_receive_buffer_consumes_nothing():
    ctx = socket_ctx()
    a, b = pair(ctx)
    sys_sendto(ctx, a, BUF, 3, 0, 0, 0)
    assert errno_of(sys_recvfrom, ctx, b, 0x1000, 3, 0, 0, 0) == E.EFAULT
    assert ctx.proc.fds.get(b).available() == 3


@pytest.mark.parametrize("abi", ABIS)
def test_sendmmsg_and_recvmmsg(abi):
    from kernel_model.syscalls.impls.sockmmsg import sys_recvmmsg, sys_sendmmsg
    ctx = socket_ctx(abi)
    a, b = pair(ctx, SOCK_DGRAM)
    word = "I" if ctx.word == 4 else "Q"
    entry = 32 if ctx.word == 4 else 64
    fmt = "<IiIIIIi" if ctx.word == 4 else "<QixxxxQQQQixxxx"
    vec = DATA + 0x200
    for i, text in enumerate((b"one", b"three")):           # msghdr i: one iovec at BUF+16*i
        ctx.write(BUF + 16 * i, text)
        ctx.write(IOV + 16 * i, struct.pack(f"<{word}{word}", BUF + 16 * i, len(text)))
        ctx.write(vec + i * entry, struct.pack(fmt, 0, 0, IOV + 16 * i, 1, 0, 0, 0))
    assert sys_sendmmsg(ctx, a, vec, 2, 0) == 2
    lengths = [struct.unpack_from("<I", ctx.read(vec + i * entry + entry - (4 if ctx.word == 4
                                                                           else 8), 4))[0]
               for i in range(2)]
    assert lengths == [3, 5]
    ctx.write(BUF, bytes(32))
    assert sys_recvmmsg(ctx, b, vec, 4, 0, 0) == 2           # two, then it stops: no wait
    assert ctx.read(BUF, 3) == b"one" and ctx.read(BUF + 16, 5) == b"three"
    assert errno_of(sys_recvmmsg, ctx, b, vec, 4, MSG_DONTWAIT, 0) == E.EAGAIN


@pytest.mark.parametrize("abi", ABIS)
def test_so_rcvtimeo_bounds_the_wait(abi):
    from kernel_model.net.constants import SO_RCVTIMEO
    ctx = socket_ctx(abi)
    _, b = pair(ctx, SOCK_DGRAM)
    timeval = struct.pack("<ii" if ctx.word == 4 else "<qq", 0, 250_000)     # 250 ms
    ctx.write(DATA + 0x700, timeval)
    assert sys_setsockopt(ctx, b, SOL_SOCKET, SO_RCVTIMEO, DATA + 0x700, len(timeval)) == 0
    with pytest.raises(WouldBlock) as info:
        sys_recvfrom(ctx, b, DATA, 4, 0, 0, 0)
    assert info.value.deadline_ns == ctx.kernel.clock.monotonic_ns() + 250 * 10**6
    ctx.kernel.clock.advance(100 * 10**6)           # woken early: the same deadline
    with pytest.raises(WouldBlock) as again:
        sys_recvfrom(ctx, b, DATA, 4, 0, 0, 0)
    assert again.value.deadline_ns == info.value.deadline_ns
    ctx.kernel.clock.advance(150 * 10**6)
    assert errno_of(sys_recvfrom, ctx, b, DATA, 4, 0, 0, 0) == E.EAGAIN
