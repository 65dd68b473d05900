"""getsockopt and setsockopt (net/socket.c __sys_getsockopt/__sys_setsockopt, net/core/sock.c).

Only SOL_SOCKET exists for an AF_UNIX socket: another level is EOPNOTSUPP (the family has no
option handler); an inet socket keeps its protocol levels' options as given. The socket answers what it knows (type, family, listening state, pending
error, peer credentials); the rest is kept by kernel_model/net/options.py.
"""
import struct

from ... import errno as E
from ...errno import GuestErrno
from ...net.ucred_view import as_seen_by
from ...net.constants import (AF_UNIX, SO_ACCEPTCONN, SO_DOMAIN, SO_ERROR, SO_PEERCRED,
                              SO_PROTOCOL, SO_TYPE, SOCK_STREAM, SOL_SOCKET)
from ...net.inet import InetSocket
from ...net.netlink import NetlinkSocket, netlink_option
from ...net.packet import PacketSocket
from ...net.protocol_options import get_option, set_option
from ...net.raw import RawSocket
from ...net.unix import LISTENING
from ..kinds import K
from ..registry import syscall
from .socket_args import sock_of

UCRED = struct.Struct("<iII")


@syscall("setsockopt", args=(("sockfd", K.FD), ("level", K.INT), ("optname", K.INT),
                             ("optval", K.STRUCT), ("optlen", K.UINT)))
def sys_setsockopt(ctx, fd, level, optname, optval, optlen):
    sock = sock_of(ctx, fd)
    optlen = ctx.int32(optlen)
    if optlen < 0:
        raise GuestErrno(E.EINVAL)
    value = ctx.read(optval, optlen) if optlen else b""
    level = ctx.int32(level)
    if level != SOL_SOCKET:
        return _set_protocol_option(sock, level, ctx.int32(optname), value, ctx.word)
    sock.options.set(ctx.int32(optname), value)
    return 0


def _set_protocol_option(sock, level: int, name: int, value: bytes, word: int) -> int:
    """IPPROTO_IP/IPV6/TCP/UDP options of an inet socket (kernel_model/net/
    protocol_options.py); AF_UNIX has none: EOPNOTSUPP."""
    if isinstance(sock, NetlinkSocket):
        sock.set_netlink_option(level, name, value)
        return 0
    if isinstance(sock, PacketSocket):
        sock.set_packet_option(level, name, value)
        return 0
    if isinstance(sock, RawSocket):
        sock.set_raw_option(level, name, value, word)
        return 0
    if not isinstance(sock, InetSocket):
        raise GuestErrno(E.EOPNOTSUPP)
    set_option(sock, level, name, value, word)
    return 0


@syscall("getsockopt", args=(("sockfd", K.FD), ("level", K.INT), ("optname", K.INT),
                             ("optval", K.STRUCT), ("optlen", K.INT_OUT)))
def sys_getsockopt(ctx, fd, level, optname, optval, optlen):
    sock = sock_of(ctx, fd)
    level = ctx.int32(level)
    if level != SOL_SOCKET and not isinstance(sock, (InetSocket, NetlinkSocket, PacketSocket)):
        raise GuestErrno(E.EOPNOTSUPP)
    length = struct.unpack("<i", ctx.read(optlen, 4))[0]
    if length < 0:
        raise GuestErrno(E.EINVAL)
    if level != SOL_SOCKET and isinstance(sock, NetlinkSocket):
        value = netlink_option(sock, level, ctx.int32(optname))
    elif level != SOL_SOCKET and isinstance(sock, PacketSocket):
        given = ctx.read(optval, min(length, 4)) if length else b""
        value = sock.get_packet_option(level, ctx.int32(optname), given)
    elif level != SOL_SOCKET and isinstance(sock, RawSocket):
        value = sock.get_raw_option(level, ctx.int32(optname))
    elif level != SOL_SOCKET:
        value = get_option(sock, level, ctx.int32(optname))
    else:
        value = _value(ctx, sock, ctx.int32(optname))
    # sk_getsockopt: an int option needs room for an int (EINVAL), other values are cut
    if len(value) == 4 and length < 4 and length != 0:
        raise GuestErrno(E.EINVAL)
    length = min(length, len(value))
    ctx.write(optval, value[:length])
    ctx.write(optlen, struct.pack("<i", length))
    return 0


def _value(ctx, sock, name: int) -> bytes:
    if name == SO_TYPE:
        return struct.pack("<i", sock.type)
    if name == SO_DOMAIN:
        return struct.pack("<i", getattr(sock, "family", AF_UNIX))
    if name == SO_PROTOCOL and isinstance(sock, (NetlinkSocket, PacketSocket, RawSocket)):
        return struct.pack("<i", sock.protocol)
    if name == SO_PROTOCOL:
        inet = isinstance(sock, InetSocket)
        return struct.pack("<i", (6 if sock.type == SOCK_STREAM else 17) if inet else 0)
    if name == SO_ACCEPTCONN:
        return struct.pack("<i", int(sock.state == LISTENING))
    if name == SO_ERROR:
        return struct.pack("<i", sock.take_error())
    if name == SO_PEERCRED:
        creds = as_seen_by(ctx.proc, sock.peercred)     # in the reader's namespaces
        return UCRED.pack(creds.pid, creds.uid, creds.gid)
    value = sock.options.get(name, ctx.word)
    if value is None:
        raise GuestErrno(E.ENOPROTOOPT)
    return value
