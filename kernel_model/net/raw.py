"""Raw IP sockets on the sandbox's loopback (net/ipv4/raw.c, net/ipv6/raw.c, af_inet.c
inet_create): socket(AF_INET or AF_INET6, SOCK_RAW, protocol) for a holder of CAP_NET_RAW over
the network namespace's owner.

A raw socket sends one datagram of its protocol per call: an IPv4 one gets the kernel's
header (IP_TOS, IP_TTL, DF under the default path-MTU discovery) unless IP_HDRINCL is set
(IPPROTO_RAW sockets have it from the start), when the user's header goes out as
raw_send_hdrinc completes it; an IPv6 one is the payload alone (an ICMPv6 socket's checksum
filled in by the kernel). What arrives goes to every raw socket of that protocol in the
namespace (raw_delivery.py), with its IPv4 header, without an IPv6 one. The port in a
sockaddr is ignored; getsockname shows the protocol there (inet_create sets inet_sport to it)
and getpeername is ENOTCONN even when connected (inet_getname: no destination port).
"""
import struct

from .. import errno as E
from ..errno import GuestErrno
from .constants import AF_INET, AF_INET6, MSG_OOB, SOCK_RAW
from .inet import InetSocket
from .inet_address import ANY, LOOPBACK, InetName, is_v4_mapped
from .ip_packet import IP_DF, IP_MAX_LENGTH, IPV4_HEADER, complete_user_header, ipv4_header
from .ip_packet import header_length, icmpv6_checksum
from .protocol_options import DEFAULTS, SOL_IP, SOL_IPV6, get_option, set_option
from .raw_delivery import deliver_ipv4, deliver_ipv6

IPPROTO_ICMP, IPPROTO_ICMPV6, IPPROTO_RAW, IPPROTO_MAX = 1, 58, 255, 263
SOL_RAW, SOL_ICMPV6 = 255, 58
ICMP_FILTER = ICMP6_FILTER = 1
IP_TOS, IP_TTL, IP_HDRINCL, IP_MTU_DISCOVER = 1, 2, 3, 10
DF_MODES = (1, 2, 3)        # IP_PMTUDISC_WANT, DO, PROBE: ip_dont_fragment sets DF
ICMP6_FILTER_SIZE = 32      # struct icmp6_filter: 256 bits, a set bit blocks the type


def check_create(protocol: int, may_raw: bool) -> None:
    """inet_create()/inet6_create(): a protocol outside [0, IPPROTO_MAX) is EINVAL, 0 matches
    no raw protocol (EPROTONOSUPPORT: the raw entry is a wildcard that protocol 0 cannot
    choose), then CAP_NET_RAW (EPERM)."""
    if not 0 <= protocol < IPPROTO_MAX:
        raise GuestErrno(E.EINVAL)
    if protocol == 0:
        raise GuestErrno(E.EPROTONOSUPPORT)
    if not may_raw:
        raise GuestErrno(E.EPERM)


class RawSocket(InetSocket):
    def __init__(self, kernel, family: int, protocol: int, ino: int, *, nonblocking: bool):
        super().__init__(kernel, family, SOCK_RAW, ino, nonblocking=nonblocking)
        self.protocol = protocol
        self.hdrincl = family == AF_INET and protocol == IPPROTO_RAW
        self.icmp_filter = bytes(4 if family == AF_INET else ICMP6_FILTER_SIZE)

    def register(self) -> None:
        """raw_hash_sk: from now on it receives its protocol's datagrams (its `net` is set)."""
        self.ports.raw_sockets.append(self)

    @property
    def protocol_name(self) -> bytes:
        """raw_prot "RAW", rawv6_prot "RAWv6"."""
        return b"RAWv6" if self.family == AF_INET6 else b"RAW"

    def _unbind(self) -> None:
        sockets = self.ports.raw_sockets if self.kernel is not None else []
        if self in sockets:
            sockets.remove(self)

    # ---- addresses --------------------------------------------------------------------------
    def bind_inet(self, name: InetName, may_bind_privileged: bool = True) -> None:
        """raw_bind/rawv6_bind: a local address or any (EADDRNOTAVAIL), again and again."""
        if not (name.is_any or self._local(name)):
            raise GuestErrno(E.EADDRNOTAVAIL)
        self.name = InetName(self.family, name.host, self.protocol)

    def _local(self, name: InetName) -> bool:
        return name.is_loopback and not is_v4_mapped(name)

    def sockname(self) -> bytes:
        host = self.name.host if self.name is not None else ANY[self.family]
        return InetName(self.family, host, self.protocol).sockaddr()

    def peername(self) -> bytes:
        raise GuestErrno(E.ENOTCONN)

    def connect_inet(self, raw: bytes, creds, embryo_ino: int, nonblocking: bool) -> None:
        self._connect_udp(raw)              # ip4_datagram_connect, ip6_datagram_connect

    def reachable(self, name: InetName) -> InetName:
        if is_v4_mapped(name):
            raise GuestErrno(E.ENETUNREACH)  # an IPv4 destination through raw IPv6: not modeled
        return super().reachable(name)

    def source_host(self) -> bytes:
        """The source address: the bound one, else lo's preferred source (fib prefsrc)."""
        if self.name is not None and not self.name.is_any:
            return self.name.host
        return LOOPBACK[self.family]

    # ---- options ----------------------------------------------------------------------------
    def set_raw_option(self, level: int, name: int, value: bytes, word: int) -> None:
        """raw_setsockopt/rawv6_setsockopt: SOL_RAW's ICMP_FILTER (IPPROTO_ICMP sockets only,
        EOPNOTSUPP), SOL_ICMPV6's ICMP6_FILTER likewise, IP_HDRINCL; the rest is ip's."""
        if self.family == AF_INET and level == SOL_RAW or \
                self.family == AF_INET6 and level == SOL_ICMPV6:
            return self._set_filter(name, value)
        if self.family == AF_INET6 and level in (SOL_RAW, SOL_IP):
            raise GuestErrno(E.ENOPROTOOPT)
        if self.family == AF_INET and (level, name) == (SOL_IP, IP_HDRINCL):
            number = value[:4] if len(value) >= 4 else value[:1]
            self.hdrincl = any(number)      # do_ip_setsockopt: an int, or a char if shorter
            return None
        return set_option(self, level, name, value, word)

    def _set_filter(self, name: int, value: bytes) -> None:
        """raw_seticmpfilter: the filter's first optlen bytes (at most its size) replaced."""
        if name != ICMP_FILTER:
            raise GuestErrno(E.ENOPROTOOPT)
        if self.protocol != (IPPROTO_ICMP if self.family == AF_INET else IPPROTO_ICMPV6):
            raise GuestErrno(E.EOPNOTSUPP)
        size = len(self.icmp_filter)
        self.icmp_filter = value[:size] + self.icmp_filter[len(value[:size]):]

    def get_raw_option(self, level: int, name: int) -> bytes:
        if self.family == AF_INET and level == SOL_RAW or \
                self.family == AF_INET6 and level == SOL_ICMPV6:
            if name != ICMP_FILTER:
                raise GuestErrno(E.ENOPROTOOPT)
            if self.protocol != (IPPROTO_ICMP if self.family == AF_INET else IPPROTO_ICMPV6):
                raise GuestErrno(E.EOPNOTSUPP)
            return self.icmp_filter
        if self.family == AF_INET and (level, name) == (SOL_IP, IP_HDRINCL):
            return struct.pack("<i", int(self.hdrincl))
        return get_option(self, level, name)

    def blocks(self, icmp_type: int) -> bool:
        """icmp_filter/icmpv6_filter: a set bit of the type drops it for this socket."""
        return bool(self.icmp_filter[icmp_type >> 3] >> (icmp_type & 7) & 1) \
            if icmp_type >> 3 < len(self.icmp_filter) else False

    def _int_option(self, level: int, name: int) -> int:
        raw = self.options.ints.get((level, name))
        return struct.unpack("<i", raw)[0] if raw is not None else DEFAULTS[level][name]

    # ---- data -------------------------------------------------------------------------------
    def send(self, data: bytes, flags: int, creds, *, files=(), target=None, named=False,
             raw: bytes | None = None) -> int:
        """raw_sendmsg/rawv6_sendmsg, in their order: the length (EMSGSIZE), MSG_OOB
        (EOPNOTSUPP), the address (EINVAL, EAFNOSUPPORT; none when unconnected:
        EDESTADDRREQ), the route (ENETUNREACH), then the datagram's own checks."""
        data = bytes(data)
        if files:
            raise GuestErrno(E.EINVAL)
        if len(data) > IP_MAX_LENGTH:
            raise GuestErrno(E.EMSGSIZE)
        if flags & MSG_OOB:
            raise GuestErrno(E.EOPNOTSUPP)
        if raw:
            destination = self.reachable(self.parse(raw))
        elif self.peer_name is not None:
            destination = self.peer_name
        else:
            raise GuestErrno(E.EDESTADDRREQ)
        if self.family == AF_INET:
            return self._send_ipv4(data, destination, creds)
        return self._send_ipv6(data, destination, creds)

    def _send_ipv4(self, data: bytes, destination: InetName, creds) -> int:
        source = self.source_host()
        if self.hdrincl:
            # raw_send_hdrinc: at least a header, whose length fits in what is sent
            if len(data) < IPV4_HEADER or header_length(data) > len(data):
                raise GuestErrno(E.EINVAL)
            packet = complete_user_header(data, source)
        else:
            if len(data) > IP_MAX_LENGTH - IPV4_HEADER:
                raise GuestErrno(E.EMSGSIZE)     # __ip_append_data: no room past 64 KiB
            ttl = self._int_option(SOL_IP, IP_TTL)
            frag = IP_DF if self._int_option(SOL_IP, IP_MTU_DISCOVER) in DF_MODES else 0
            packet = ipv4_header(len(data), tos=self._int_option(SOL_IP, IP_TOS) & 0xFF,
                                 ident=0, frag=frag, ttl=64 if ttl < 0 else ttl,
                                 protocol=self.protocol, source=source,
                                 destination=destination.host) + data
        deliver_ipv4(self.ports, packet, creds)
        return len(data)

    def _send_ipv6(self, data: bytes, destination: InetName, creds) -> int:
        source = self.source_host()
        if self.protocol == IPPROTO_ICMPV6:
            if len(data) < 4:
                raise GuestErrno(E.EINVAL)       # rawv6_push_pending_frames: no checksum room
            data = icmpv6_checksum(data, source, destination.host)
        if self.protocol != IPPROTO_RAW:         # IPPROTO_RAW's own IPv6 headers: not modeled
            deliver_ipv6(self.ports, data, self.protocol, source, destination.host, creds)
        return len(data)

    def source(self, taken) -> bytes:
        """raw_recvmsg: the sender's address, port 0."""
        return taken.sender.sockaddr() if taken.sender is not None else b""
