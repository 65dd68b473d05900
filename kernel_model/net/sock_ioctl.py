"""ioctl(2) on a socket (net/socket.c sock_ioctl): the interface requests tools such as
ifconfig, getifaddrs' old path and LTP's sockioctl01 make, answered for the sandbox's one
interface, lo of the socket's network namespace (rtnetlink.py, namespace.py: up or down, its
MTU), and TCP's SIOCATMARK. Setting lo's flags or MTU takes CAP_NET_ADMIN over the namespace's
user namespace; a negative MTU is EINVAL (dev_validate_mtu).

The order is Linux's: SIOCGIFCONF is sock_ioctl's own (dev_ifconf); an AF_INET socket's
address requests and SIOCSIFFLAGS are inet_ioctl's (devinet_ioctl); then the protocol's ioctl
(tcp_ioctl's SIOCATMARK); what none of these knows goes to the device layer only when it is a
socket request (type 0x89, is_socket_ioctl_cmd), which copies the struct ifreq in first
(EFAULT) and answers an unknown request ENOTTY (dev_ioctl); any other request is ENOTTY.

struct ifreq is IFNAMSIZ (16) bytes of name and a 24-byte union on x86-64, 16 on i386 (struct
ifmap's longs; compat_ifreq); struct ifconf is {int len; char *buf}, padded on x86-64.
"""
import struct

from .. import errno as E
from ..creds import CAP_NET_ADMIN
from ..errno import GuestErrno
from .constants import AF_INET, SOCK_STREAM
from .rtnetlink import ARPHRD_LOOPBACK, IFF_LOOPBACK, IFF_RUNNING, IFF_UP, LO_INDEX, LO_NAME

SIOCATMARK, SIOCGIFNAME, SIOCGIFCONF = 0x8905, 0x8910, 0x8912
SIOCGIFFLAGS, SIOCSIFFLAGS = 0x8913, 0x8914
SIOCGIFADDR, SIOCGIFDSTADDR, SIOCGIFBRDADDR, SIOCGIFNETMASK = 0x8915, 0x8917, 0x8919, 0x891B
SIOCGIFMETRIC, SIOCGIFMTU, SIOCSIFMTU, SIOCGIFHWADDR = 0x891D, 0x8921, 0x8922, 0x8927
SIOCGIFINDEX, SIOCGIFTXQLEN, SIOCDEVPRIVATE = 0x8933, 0x8942, 0x89F0
SOCK_IOC_TYPE = 0x89
IFNAMSIZ = 16
LO_TXQLEN = 1000                              # drivers/net/loopback.c loopback_setup
# lo's one IPv4 address (devinet.c inetdev_event adds it at NETDEV_UP): local and peer
# 127.0.0.1, mask 255.0.0.0, no broadcast
LO_INET = {SIOCGIFADDR: b"\x7f\0\0\x01", SIOCGIFDSTADDR: b"\x7f\0\0\x01",
           SIOCGIFBRDADDR: b"\0\0\0\0", SIOCGIFNETMASK: b"\xff\0\0\0"}


def ifreq_size(ctx) -> int:
    return 40 if ctx.abi == "x86_64" else 32


def _net(ctx, sock):
    """The socket's network namespace (None on the socket: the initial one)."""
    net = getattr(sock, "net", None)
    return net if net is not None else ctx.kernel.initial_net


def _may_admin(ctx, sock) -> None:
    net = _net(ctx, sock)
    if not ctx.proc.creds.ns_capable(net.user_ns, CAP_NET_ADMIN):
        raise GuestErrno(E.EPERM)


def socket_ioctl(ctx, sock, request: int, arg: int) -> int:
    if request == SIOCGIFCONF:
        return _ifconf(ctx, arg)
    inet = getattr(sock, "family", None) == AF_INET
    if inet and (request in LO_INET or request == SIOCSIFFLAGS):
        return _devinet(ctx, sock, request, arg)
    if request == SIOCATMARK and inet and sock.type == SOCK_STREAM:
        ctx.write(arg, struct.pack("<i", 0))   # tcp_ioctl: no urgent data is ever pending
        return 0
    if request >> 8 & 0xFF != SOCK_IOC_TYPE:
        raise GuestErrno(E.ENOTTY)
    return _dev_ioctl(ctx, sock, request, arg)


def _ifconf(ctx, arg: int) -> int:
    """dev_ifconf: lo's IPv4 address as one struct ifreq (inet_gifconf) where the buffer has
    room for it, or its size with a NULL buffer; ifc_len becomes the bytes written."""
    size = ifreq_size(ctx)
    if ctx.abi == "x86_64":
        length, buf = struct.unpack("<i4xQ", ctx.read(arg, 16))
    else:
        length, buf = struct.unpack("<iI", ctx.read(arg, 8))
    total = size
    if buf:
        total = 0
        if length >= size:
            sin = struct.pack("<HH4s8x", AF_INET, 0, LO_INET[SIOCGIFADDR])
            ctx.write(buf, LO_NAME.ljust(IFNAMSIZ, b"\0") + sin.ljust(size - IFNAMSIZ, b"\0"))
            total = size
    ctx.write(arg, struct.pack("<i", total))
    return 0


def _name(ifreq: bytes) -> bytes:
    """ifr_name, ended at its 16th byte as dev_ioctl ends it; an alias's ':' part dropped."""
    return ifreq[:IFNAMSIZ - 1].split(b"\0", 1)[0].split(b":", 1)[0]


def _devinet(ctx, sock, request: int, arg: int) -> int:
    """devinet_ioctl: EFAULT copying in, EPERM for SIOCSIFFLAGS without CAP_NET_ADMIN, ENODEV
    for another name, then the address asked for as a sockaddr_in."""
    ifreq = ctx.read(arg, ifreq_size(ctx))
    if request == SIOCSIFFLAGS:
        _may_admin(ctx, sock)
    if _name(ifreq) != LO_NAME:
        raise GuestErrno(E.ENODEV)
    if request == SIOCSIFFLAGS:
        return _set_flags(ctx, sock, ifreq)
    ctx.write(arg + IFNAMSIZ, struct.pack("<HH4s8x", AF_INET, 0, LO_INET[request]))
    return 0


def _set_flags(ctx, sock, ifreq: bytes) -> int:
    """dev_change_flags: lo's IFF_UP follows ifr_flags, as rtnetlink's RTM_NEWLINK sets it."""
    flags, = struct.unpack_from("<H", ifreq, IFNAMSIZ)
    _net(ctx, sock).netlink_ports.loopback_up = bool(flags & IFF_UP)
    return 0


def _set_mtu(ctx, sock, ifreq: bytes) -> int:
    """dev_set_mtu: what RTM_GETLINK's IFLA_MTU shows too."""
    mtu, = struct.unpack_from("<i", ifreq, IFNAMSIZ)
    if mtu < 0:
        raise GuestErrno(E.EINVAL)
    _net(ctx, sock).netlink_ports.loopback_mtu = mtu
    return 0


def _dev_ioctl(ctx, sock, request: int, arg: int) -> int:
    """sock_do_ioctl -> dev_ioctl: get_user_ifreq first (EFAULT), SIOCGIFNAME by index, the
    others by name (ENODEV), an unknown request ENOTTY."""
    ifreq = ctx.read(arg, ifreq_size(ctx))
    if request == SIOCGIFNAME:
        index, = struct.unpack_from("<i", ifreq, IFNAMSIZ)
        if index != LO_INDEX:
            raise GuestErrno(E.ENODEV)
        ctx.write(arg, LO_NAME.ljust(IFNAMSIZ, b"\0"))
        return 0
    if request in (SIOCSIFFLAGS, SIOCSIFMTU):
        _may_admin(ctx, sock)
    elif SIOCDEVPRIVATE <= request <= SIOCDEVPRIVATE + 15:
        if _name(ifreq) != LO_NAME:             # dev_ifsioc: the device's ndo_siocdevprivate,
            raise GuestErrno(E.ENODEV)
        raise GuestErrno(E.EOPNOTSUPP)          # which lo has none
    elif request not in DEVICE_VALUES:
        raise GuestErrno(E.ENOTTY)
    if _name(ifreq) != LO_NAME:
        raise GuestErrno(E.ENODEV)
    if request == SIOCSIFFLAGS:
        return _set_flags(ctx, sock, ifreq)
    if request == SIOCSIFMTU:
        return _set_mtu(ctx, sock, ifreq)
    ctx.write(arg + IFNAMSIZ, DEVICE_VALUES[request](_net(ctx, sock)))
    return 0


def _flags(net) -> bytes:
    """dev_get_flags as a short: IFF_LOWER_UP (bit 16) does not fit."""
    up = net.netlink_ports.loopback_up
    return struct.pack("<H", IFF_LOOPBACK | (IFF_UP | IFF_RUNNING if up else 0))


# dev_ifsioc_locked's and SIOCGIFHWADDR's answers: the bytes at the ifreq's union
DEVICE_VALUES = {
    SIOCGIFFLAGS: _flags,
    SIOCGIFMETRIC: lambda net: struct.pack("<i", 0),
    SIOCGIFMTU: lambda net: struct.pack("<i", net.netlink_ports.loopback_mtu),
    SIOCGIFINDEX: lambda net: struct.pack("<i", LO_INDEX),
    SIOCGIFTXQLEN: lambda net: struct.pack("<i", LO_TXQLEN),
    SIOCGIFHWADDR: lambda net: struct.pack("<H14x", ARPHRD_LOOPBACK),   # an all-zero address
}
