"""IPv4 peers of IPv6 sockets, and IPV6_ADDRFORM (net/ipv6/ipv6_sockglue.c).

An IPv6 socket that is not IPV6_V6ONLY reaches and is reached by IPv4 sockets; the IPv4 end
is seen at a v4-mapped address (::ffff:127.0.0.1: inet_address.in_family). Such a connected
socket may become an IPv4 one: setsockopt(IPPROTO_IPV6, IPV6_ADDRFORM, AF_INET)
(do_ipv6_setsockopt) wants an int (EINVAL), the value AF_INET (EINVAL), a TCP socket or a UDP
one with no corked datagram (EBUSY), connected (ENOTCONN), to a v4-mapped peer and not
IPV6_V6ONLY (EADDRNOTAVAIL); then its family and addresses are IPv4's, and its IPv6 level is
gone (ENOPROTOOPT). getsockopt of it gives the family of a connected socket (ENOTCONN).
"""
import struct

from .. import errno as E
from ..errno import GuestErrno
from .constants import AF_INET, SOCK_DGRAM
from .inet_address import in_family, is_v4_mapped
from .unix import CONNECTED

SOL_IPV6, IPV6_ADDRFORM, IPV6_V6ONLY = 41, 1, 26


def to_ipv4(sock, value: bytes) -> None:
    if len(value) < 4 or struct.unpack_from("<i", value)[0] != AF_INET:
        raise GuestErrno(E.EINVAL)
    if sock.type == SOCK_DGRAM and sock.corked:
        raise GuestErrno(E.EBUSY)                # udp's pending datagram
    if sock.state != CONNECTED:
        raise GuestErrno(E.ENOTCONN)
    peer = sock.peer_name if sock.type == SOCK_DGRAM else sock.peer_address()
    v6only = sock.options.ints.get((SOL_IPV6, IPV6_V6ONLY), b"\0")[0]
    if v6only or not is_v4_mapped(peer):
        raise GuestErrno(E.EADDRNOTAVAIL)
    sock.family = AF_INET
    if sock.name is not None:
        sock.name = in_family(sock.name, AF_INET)
    if sock.type == SOCK_DGRAM:
        sock.peer_name = in_family(sock.peer_name, AF_INET)


def addrform(sock) -> bytes:
    if sock.state != CONNECTED:
        raise GuestErrno(E.ENOTCONN)
    return struct.pack("<i", sock.family)
