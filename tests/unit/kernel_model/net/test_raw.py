"""Raw IP sockets (kernel_model/net/raw.py, raw_delivery.py; net/ipv4/raw.c, icmp.c): who
may make one, which sockets of the namespace get a copy of a datagram, the kernel's echo
replies, ICMP_FILTER and IP_HDRINCL."""
import struct
from types import SimpleNamespace

import pytest

from kernel_model import errno as E
from kernel_model.errno import GuestErrno
from kernel_model.net.constants import AF_INET, AF_INET6
from kernel_model.net.inet_address import InetName
from kernel_model.net.inet_ports import InetPorts
from kernel_model.net.message import Credentials
from kernel_model.net.raw import (IPPROTO_ICMP, IPPROTO_ICMPV6, IPPROTO_RAW, SOL_RAW, ICMP_FILTER,
                                  RawSocket, check_create)
from kernel_model.net.protocol_options import SOL_IP

ROOT = Credentials(1, 0, 0)
LO = bytes([127, 0, 0, 1])
LO6 = bytes(15) + b"\x01"
ECHO = bytes([8, 0, 0xF7, 0xFF, 0, 0, 0, 0])        # type 8, checksum of the rest (all 0)
HDRINCL = struct.pack("<i", 1)


def sockaddr(host: bytes = LO) -> bytes:
    return InetName(AF_INET, host, 0).sockaddr()


class Kernel:
    def __init__(self):
        self.inet_ports = InetPorts()

    def wakeup(self, _):
        pass


def raw_socket(kernel, protocol: int, family: int = AF_INET) -> RawSocket:
    sock = RawSocket(kernel, family, protocol, 1, nonblocking=True)
    sock.register()
    return sock


def received(sock) -> list[bytes]:
    out = []
    while sock.queue:
        out.append(sock.recv(70000, 0).data)
    return out


@pytest.mark.parametrize("protocol, may, errno", [(0, True, E.EPROTONOSUPPORT),
                                                  (-1, True, E.EINVAL), (263, True, E.EINVAL),
                                                  (1, False, E.EPERM), (0, False, E.EPROTONOSUPPORT)])
def test_creation_checks_in_inet_creates_order(protocol, may, errno):
    with pytest.raises(GuestErrno) as caught:
        check_create(protocol, may)
    assert caught.value.errno == errno


def test_every_protocol_up_to_ipproto_max_is_made():
    for protocol in (1, 255, 256, 262):
        check_create(protocol, True)


def test_an_echo_request_reaches_every_icmp_socket_then_its_reply():
    kernel = Kernel()
    a, b, other = raw_socket(kernel, IPPROTO_ICMP), raw_socket(kernel, IPPROTO_ICMP), \
        raw_socket(kernel, 253)
    assert a.send(ECHO, 0, ROOT, raw=sockaddr(bytes([127, 0, 0, 9]))) == 8
    for sock in (a, b):
        request, reply = received(sock)
        assert (request[20], reply[20]) == (8, 0)
        assert request[12:20] == LO + bytes([127, 0, 0, 9])       # 127.0.0.1 > 127.0.0.9
        assert reply[12:20] == bytes([127, 0, 0, 9]) + LO         # answered from 127.0.0.9
        assert request[6] == 0x40 and reply[6] == 0               # DF on the request only
    assert received(other) == []


def test_icmp_filter_drops_the_blocked_types_for_that_socket_only():
    kernel = Kernel()
    a, b = raw_socket(kernel, IPPROTO_ICMP), raw_socket(kernel, IPPROTO_ICMP)
    b.set_raw_option(SOL_RAW, ICMP_FILTER, struct.pack("<I", 1 << 8), 8)
    a.send(ECHO, 0, ROOT, raw=sockaddr())
    assert [packet[20] for packet in received(a)] == [8, 0]
    assert [packet[20] for packet in received(b)] == [0]
    assert b.get_raw_option(SOL_RAW, ICMP_FILTER) == struct.pack("<I", 1 << 8)


def test_icmp_filter_is_for_icmp_sockets():
    with pytest.raises(GuestErrno) as caught:
        raw_socket(Kernel(), 253).set_raw_option(SOL_RAW, ICMP_FILTER, bytes(4), 8)
    assert caught.value.errno == E.EOPNOTSUPP


def test_ipproto_raw_sends_the_users_header_completed():
    kernel = Kernel()
    sender, listener = raw_socket(kernel, IPPROTO_RAW), raw_socket(kernel, 253)
    assert sender.get_raw_option(SOL_IP, 3) == HDRINCL
    header = bytes([0x45, 0, 0, 0, 0, 0, 0x40, 0, 9, 253, 0, 0]) + bytes(4) + LO
    assert sender.send(header + b"data", 0, ROOT, raw=sockaddr()) == 24
    (packet,) = received(listener)
    assert packet[2:4] == b"\0\x18" and packet[12:16] == LO and packet[8] == 9


@pytest.mark.parametrize("length, ihl, errno", [(19, 5, E.EINVAL), (40, 15, E.EINVAL),
                                                (0x10000, 5, E.EMSGSIZE)])
def test_hdrincl_refuses_what_cannot_be_a_header(length, ihl, errno):
    sock = raw_socket(Kernel(), 253)
    sock.set_raw_option(SOL_IP, 3, HDRINCL, 8)
    with pytest.raises(GuestErrno) as caught:
        sock.send(bytes([0x40 | ihl]) + bytes(length - 1), 0, ROOT, raw=sockaddr())
    assert caught.value.errno == errno


def test_a_bad_user_header_is_dropped_on_arrival():
    kernel = Kernel()
    sock = raw_socket(kernel, 204)
    sock.set_raw_option(SOL_IP, 3, HDRINCL, 8)
    assert sock.send(b"\xcc" * 400, 0, ROOT, raw=bytes(16)) == 400     # sendmsg03's datagram
    assert received(sock) == []


def test_a_connected_socket_takes_its_peers_datagrams_only():
    kernel = Kernel()
    near, far = raw_socket(kernel, 253), raw_socket(kernel, 253)
    far.connect_inet(sockaddr(bytes([127, 0, 0, 7])), ROOT, 0, False)
    near.send(b"x", 0, ROOT, raw=sockaddr())
    assert len(received(near)) == 1 and received(far) == []


def test_icmpv6_echo_gets_the_kernels_checksum_and_a_reply_without_header():
    kernel = Kernel()
    sock = raw_socket(kernel, IPPROTO_ICMPV6, AF_INET6)
    message = bytes([128, 0, 0, 0, 0x12, 0x34, 0, 7]) + b"ping"
    assert sock.send(message, 0, ROOT, raw=InetName(AF_INET6, LO6, 0).sockaddr()) == 12
    request, reply = received(sock)
    assert (request[0], reply[0]) == (128, 129) and request[2:4] != b"\0\0"
    assert reply[4:] == message[4:]


def test_closing_leaves_the_namespaces_table():
    kernel = Kernel()
    sock = raw_socket(kernel, IPPROTO_ICMP)
    sock.close()
    assert kernel.inet_ports.raw_sockets == []


def test_each_namespace_has_its_own_raw_sockets():
    first, second = Kernel(), SimpleNamespace(inet_ports=InetPorts())
    here = raw_socket(first, 253)
    there = RawSocket(first, AF_INET, 253, 2, nonblocking=True)
    there.net = second
    there.register()
    here.send(b"x", 0, ROOT, raw=sockaddr())
    assert len(received(here)) == 1 and received(there) == []
