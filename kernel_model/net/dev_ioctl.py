"""The interface requests a socket answers (net/socket.c sock_do_ioctl -> net/core/dev_ioctl.c
dev_ioctl) for its network namespace's one link, lo (namespace.py): struct ifreq is the
interface's name (IFNAMSIZ bytes) then a union at offset 16.

  SIOCGIFINDEX   its index, 1
  SIOCGIFFLAGS   IFF_LOOPBACK, with IFF_UP and IFF_RUNNING while it is up
  SIOCSIFFLAGS   up or down by IFF_UP (dev_change_flags), CAP_NET_ADMIN over the namespace
  SIOCGIFMTU     its MTU (64 KiB at first)
  SIOCSIFMTU     a new MTU, CAP_NET_ADMIN; a negative one is EINVAL (dev_validate_mtu)

Another name is ENODEV; any other request ENOTTY (dev_ioctl's default), as before any socket
had an ioctl.
"""
import struct

from .. import errno as E
from ..errno import GuestErrno

SIOCGIFFLAGS, SIOCSIFFLAGS, SIOCGIFMTU, SIOCSIFMTU, SIOCGIFINDEX = 0x8913, 0x8914, 0x8921, 0x8922, 0x8933
IFNAMSIZ = 16
IFF_UP, IFF_LOOPBACK, IFF_RUNNING = 0x1, 0x8, 0x40
LO_NAME, LO_INDEX = b"lo", 1
CAP_NET_ADMIN = 12


def sock_ioctl(ctx, sock, request: int, arg: int) -> int:
    if request not in (SIOCGIFFLAGS, SIOCSIFFLAGS, SIOCGIFMTU, SIOCSIFMTU, SIOCGIFINDEX):
        raise GuestErrno(E.ENOTTY)
    name = ctx.read(arg, IFNAMSIZ).split(b"\0", 1)[0]
    if name != LO_NAME:
        raise GuestErrno(E.ENODEV)
    net = sock.net if sock.net is not None else ctx.kernel.initial_net
    value_at = arg + IFNAMSIZ
    if request == SIOCGIFINDEX:
        ctx.write(value_at, struct.pack("<i", LO_INDEX))
    elif request == SIOCGIFFLAGS:
        up = net.netlink_ports.loopback_up
        ctx.write(value_at, struct.pack("<H", IFF_LOOPBACK | (IFF_UP | IFF_RUNNING if up else 0)))
    elif request == SIOCGIFMTU:
        ctx.write(value_at, struct.pack("<i", net.netlink_ports.loopback_mtu))
    else:
        if not ctx.proc.creds.ns_capable(net.user_ns, CAP_NET_ADMIN):
            raise GuestErrno(E.EPERM)
        if request == SIOCSIFFLAGS:
            flags, = struct.unpack("<H", ctx.read(value_at, 2))
            net.netlink_ports.loopback_up = bool(flags & IFF_UP)
        else:
            mtu, = struct.unpack("<i", ctx.read(value_at, 4))
            if mtu < 0:
                raise GuestErrno(E.EINVAL)
            net.netlink_ports.loopback_mtu = mtu     # what RTM_GETLINK's IFLA_MTU shows too
    return 0
