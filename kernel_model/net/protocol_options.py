"""The protocol levels' socket options of an inet socket (net/ipv4/ip_sockglue.c, tcp.c,
udp.c, net/ipv6/ipv6_sockglue.c): which exist, and their default values. They are kept and
read back; on a loopback that loses nothing they change nothing.

Levels a socket does not have differ by direction, as in Linux: setsockopt falls through to
ip_setsockopt, which answers ENOPROTOOPT, getsockopt to ip_getsockopt, which answers
EOPNOTSUPP. A level it has but an option it does not know is ENOPROTOOPT both ways.
"""
import struct

from .. import errno as E
from ..errno import GuestErrno
from .constants import AF_INET6, SOCK_DGRAM, SOCK_STREAM
from .dual_stack import IPV6_ADDRFORM, addrform, to_ipv4

SOL_IP, SOL_TCP, SOL_UDP, SOL_IPV6 = 0, 6, 17, 41

DEFAULTS = {
    SOL_IP: {1: 0, 2: 64, 3: 0, 6: 0, 8: 0, 10: 1, 11: 0, 12: 0, 13: 0, 15: 0, 19: 0, 24: 0,
             32: 0, 33: 1, 34: 1},          # IP_TOS, IP_TTL ... IP_MULTICAST_TTL/LOOP
    SOL_TCP: {1: 0, 2: 536, 3: 0, 4: 7200, 5: 75, 6: 9, 7: 6, 8: 60, 9: 0, 10: 0, 12: 1, 18: 0,
              23: 0, 25: 0},                # TCP_NODELAY, TCP_MAXSEG, TCP_CORK, keepalive...
    SOL_UDP: {1: 0, 103: 0, 104: 0},        # UDP_CORK, UDP_SEGMENT, UDP_GRO
    SOL_IPV6: {16: 64, 17: 0, 18: 1, 19: 1, 26: 0, 49: 0, 67: 0},   # ..., IPV6_V6ONLY, TCLASS
}
IP_ADD_MEMBERSHIP, IP_DROP_MEMBERSHIP, MCAST_JOIN_GROUP, MCAST_LEAVE_GROUP = 35, 36, 42, 45
JOIN = {IP_ADD_MEMBERSHIP, MCAST_JOIN_GROUP}
LEAVE = {IP_DROP_MEMBERSHIP, MCAST_LEAVE_GROUP}
SET_ONLY = {SOL_IP: JOIN | LEAVE, SOL_IPV6: {20, 21}}   # memberships: IP_*, MCAST_*, IPV6_*


def levels(family: int, sock_type: int) -> tuple[int, ...]:
    transport = (SOL_TCP,) if sock_type == SOCK_STREAM else (SOL_UDP,) \
        if sock_type == SOCK_DGRAM else ()           # a raw socket has no transport level
    return (SOL_IP, SOL_IPV6, *transport) if family == AF_INET6 else (SOL_IP, *transport)


def set_option(sock, level: int, name: int, value: bytes, word: int) -> None:
    if level not in levels(sock.family, sock.type):
        raise GuestErrno(E.ENOPROTOOPT)
    if (level, name) == (SOL_IPV6, IPV6_ADDRFORM):
        return to_ipv4(sock, value)
    if name not in DEFAULTS[level] and name not in SET_ONLY.get(level, ()):
        raise GuestErrno(E.ENOPROTOOPT)
    if level == SOL_IP and name in JOIN | LEAVE:
        return _membership(sock, name, value, word)
    if len(value) < 4 and name not in SET_ONLY.get(level, ()):
        raise GuestErrno(E.EINVAL)
    sock.options.ints[(level, name)] = value[:4]


def get_option(sock, level: int, name: int) -> bytes:
    if level not in levels(sock.family, sock.type):
        raise GuestErrno(E.EOPNOTSUPP)
    if (level, name) == (SOL_IPV6, IPV6_ADDRFORM):
        return addrform(sock)
    if name not in DEFAULTS[level]:
        raise GuestErrno(E.ENOPROTOOPT)
    return sock.options.ints.get((level, name), struct.pack("<i", DEFAULTS[level][name]))


def _membership(sock, name: int, value: bytes, word: int) -> None:
    """The multicast groups a socket joined (ip_mc_join_group/ip_mc_leave_group): joining
    twice is EADDRINUSE, leaving a group it is not in EADDRNOTAVAIL. An accepted socket starts
    with none (accept02: the listener's list is not copied). The group is struct ip_mreq's
    first address, or the address inside struct group_req's sockaddr_storage (after a u32
    interface index padded to the ABI's long)."""
    if name in (IP_ADD_MEMBERSHIP, IP_DROP_MEMBERSHIP):
        if len(value) < 8:
            raise GuestErrno(E.EINVAL)
        group = value[:4]
    else:
        if len(value) < word + 8:
            raise GuestErrno(E.EINVAL)
        group = value[word + 4:word + 8]
    if name in JOIN:
        if group in sock.multicast_groups:
            raise GuestErrno(E.EADDRINUSE)
        sock.multicast_groups.add(group)
    elif group in sock.multicast_groups:
        sock.multicast_groups.discard(group)
    else:
        raise GuestErrno(E.EADDRNOTAVAIL)
