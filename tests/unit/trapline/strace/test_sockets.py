"""The socket calls as strace 6.1 prints them (sockets.py): the expected texts are Debian's
strace output for the same calls (Python's socket module on the host)."""
import struct

from trapline.strace.syscall_line import format_syscall
from tests.unit.trapline.strace.fake_memory import FakeMemory

BUF, LEN = 0x4000, 0x5000


def _line(name, args, ret, regions, bits=64):
    return format_syscall(name, args, ret, FakeMemory(regions), bits)


def test_inet_socket_and_its_address():
    assert _line("socket", (2, 1, 0), 7, {}) == "socket(AF_INET, SOCK_STREAM, IPPROTO_IP) = 7"
    assert _line("socket", (1, 0o2000001, 0), 3, {}) == "socket(AF_UNIX, SOCK_STREAM|SOCK_CLOEXEC, 0) = 3"
    sin = struct.pack("<H", 2) + struct.pack(">H", 46553) + bytes([127, 0, 0, 1]) + bytes(8)
    assert _line("bind", (7, BUF, 16), 0, {BUF: sin}) == \
        'bind(7, {sa_family=AF_INET, sin_port=htons(46553), sin_addr=inet_addr("127.0.0.1")}, 16) = 0'


def test_inet6_address_with_an_unchanged_length():
    sin6 = struct.pack("<H", 10) + bytes(26)
    line = _line("getsockname", (11, BUF, LEN), 0, {BUF: sin6, LEN: struct.pack("<I", 28)})
    assert line == ('getsockname(11, {sa_family=AF_INET6, sin6_port=htons(0), sin6_flowinfo=htonl(0), '
                    'inet_pton(AF_INET6, "::", &sin6_addr), sin6_scope_id=0}, [28]) = 0')


def test_udp_send_with_its_destination_and_flags():
    sin = struct.pack("<H", 2) + struct.pack(">H", 9) + bytes([127, 0, 0, 1]) + bytes(8)
    line = _line("sendto", (9, BUF + 16, 1, 0x4000, BUF, 16), 1, {BUF: sin + b"x"})
    assert line == ('sendto(9, "x", 1, MSG_NOSIGNAL, {sa_family=AF_INET, sin_port=htons(9), '
                    'sin_addr=inet_addr("127.0.0.1")}, 16) = 1')


def test_options_and_shutdown():
    assert _line("setsockopt", (4, 1, 16, BUF, 4), 0, {BUF: struct.pack("<i", 1)}) == \
        "setsockopt(4, SOL_SOCKET, SO_PASSCRED, [1], 4) = 0"
    assert _line("shutdown", (4, 0), 0, {}) == "shutdown(4, SHUT_RD) = 0"
    assert _line("eventfd2", (3, 0o4000), 3, {}) == "eventfd2(3, EFD_NONBLOCK) = 3"


def test_recvfrom_shows_no_more_than_the_buffer_holds():
    """MSG_TRUNC returns the datagram's length (10) though 4 bytes were room."""
    assert _line("recvfrom", (4, BUF, 4, 0x22, 0, 0), 10, {BUF: b"0123\x02\0\0\0\0\0"}) == \
        'recvfrom(4, "0123", 4, MSG_PEEK|MSG_TRUNC, NULL, NULL) = 10'
