"""struct sockaddr_in and sockaddr_in6 (include/uapi/linux/in.h, in6.h) for the sandbox's
loopback network: the only hosts are 127.0.0.0/8 and ::1 (and 0.0.0.0 / :: to bind to them).

sockaddr_in: sa_family_t sin_family; __be16 sin_port; struct in_addr sin_addr; 8 bytes of zero.
sockaddr_in6: sin6_family; __be16 sin6_port; __be32 sin6_flowinfo; struct in6_addr; u32 scope.
"""
import struct
from dataclasses import dataclass

from .. import errno as E
from ..errno import GuestErrno
from .constants import AF_INET, AF_INET6, AF_UNSPEC

SOCKADDR_IN = 16
SIN6_LEN_RFC2133 = 24               # the shortest sockaddr_in6 inet6_bind/connect accept
SOCKADDR_IN6 = 28
ANY = {AF_INET: bytes(4), AF_INET6: bytes(16)}
LOOPBACK = {AF_INET: bytes([127, 0, 0, 1]), AF_INET6: bytes(15) + b"\x01"}
V4_MAPPED = bytes(10) + b"\xff\xff"


@dataclass(frozen=True)
class InetName:
    family: int
    host: bytes                     # 4 or 16 bytes, network order
    port: int

    @property
    def is_any(self) -> bool:
        return self.host == ANY[self.family]

    @property
    def is_loopback(self) -> bool:
        if self.family == AF_INET:
            return self.host[0] == 127
        return self.host == LOOPBACK[AF_INET6] or \
            (self.host[:12] == V4_MAPPED and self.host[12] == 127)

    def sockaddr(self) -> bytes:
        if self.family == AF_INET:
            return struct.pack("<H", AF_INET) + struct.pack(">H", self.port) + self.host + bytes(8)
        return struct.pack("<H", AF_INET6) + struct.pack(">HI", self.port, 0) + self.host + \
            bytes(4)

    def with_port(self, port: int) -> "InetName":
        return InetName(self.family, self.host, port)

    def text(self) -> str:
        if self.family == AF_INET:
            return ".".join(map(str, self.host)) + f":{self.port}"
        return f"[{self.host.hex()}]:{self.port}"


def unbound(family: int) -> InetName:
    return InetName(family, ANY[family], 0)


def parse(raw: bytes, family: int) -> InetName:
    """inet_bind/inet_dgram_connect's checks: EINVAL for a short address, EAFNOSUPPORT for
    another family (AF_UNSPEC reads as the socket's, as Linux allows for INADDR_ANY)."""
    minimum = SOCKADDR_IN if family == AF_INET else SIN6_LEN_RFC2133
    if len(raw) < minimum:
        raise GuestErrno(E.EINVAL)
    given = struct.unpack_from("<H", raw)[0]
    if given not in (family, AF_UNSPEC):
        raise GuestErrno(E.EAFNOSUPPORT)
    port = struct.unpack_from(">H", raw, 2)[0]
    host = raw[4:8] if family == AF_INET else raw[8:24]
    return InetName(family, host, port)


def in_family(name: InetName, family: int) -> InetName:
    """`name` as a socket of `family` sees it: an IPv4 address is v4-mapped for an IPv6 socket
    (::ffff:a.b.c.d, what an IPv6 socket's peer address is when an IPv4 one reached it) and a
    v4-mapped one is plain IPv4 for an IPv4 socket; any other stays as it is."""
    if name.family == family:
        return name
    if family == AF_INET6:
        return InetName(AF_INET6, V4_MAPPED + name.host, name.port)
    if name.host[:12] == V4_MAPPED:
        return InetName(AF_INET, name.host[12:], name.port)
    if name.is_any:
        return InetName(AF_INET, ANY[AF_INET], name.port)
    return name


def is_v4_mapped(name: InetName) -> bool:
    return name.family == AF_INET6 and name.host[:12] == V4_MAPPED
