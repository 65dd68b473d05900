"""Creating and connecting sockets: socket, socketpair, bind, listen, accept, accept4,
connect, getsockname, getpeername, shutdown (net/socket.c over net/unix/af_unix.c and
net/ipv4/af_inet.c).

AF_UNIX is modeled (kernel_model/net/unix.py), and AF_INET/AF_INET6 TCP and UDP on a loopback
network inside the sandbox (kernel_model/net/inet.py): 127.0.0.1 and ::1 reach its own
sockets, any other address is ENETUNREACH, noted once in the run's report. AF_NETLINK's
NETLINK_ROUTE talks with the kernel (kernel_model/net/netlink.py); AF_PACKET sockets take
their options and see no frame (kernel_model/net/packet.py). Other families fail with
EAFNOSUPPORT, as on a kernel built without them.
"""
import struct

from ... import errno as E
from ...creds import CAP_NET_BIND_SERVICE
from ...errno import GuestErrno
from ...fsview import fs_view
from ...landlock import hooks as landlock
from ...net.address import is_autobind_request, parse
from ...net.constants import (AF_INET, AF_INET6, AF_NETLINK, AF_UNIX, AF_UNSPEC, SOCK_CLOEXEC, SOCK_DGRAM,
                              SOCK_NONBLOCK, SOCK_RAW, SOCK_SEQPACKET, SOCK_STREAM,
                              SOCK_TYPE_MASK, SO_RCVTIMEO, SOMAXCONN)
from ...net.inet import InetSocket
from ...net.netlink import NetlinkSocket, check_create
from ...net.packet import AF_PACKET, PacketSocket, check_create as check_packet
from ...net.raw import RawSocket, check_create as check_raw
from ...net.unix import UnixSocket, pair
from ..kinds import K
from ..registry import syscall
from .socket_args import (caller_creds, check_sockaddr_out, find_raw, read_sockaddr, sock_of,
                          net_capable, timed, unix_names, write_sockaddr)

INET_FAMILIES = (AF_INET, AF_INET6)
CAP_NET_RAW = 13
INET_PROTOCOLS = {SOCK_STREAM: 6, SOCK_DGRAM: 17}      # IPPROTO_TCP, IPPROTO_UDP
IPPROTO_UDPLITE = 136       # UDP-Lite: on a loss-free loopback, UDP with a coverage option
UNIX_TYPES = (SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET)


def _split_type(ctx, type_: int) -> tuple[int, int]:
    """__sys_socket(): the SOCK_NONBLOCK/SOCK_CLOEXEC flags ride in the type (EINVAL for
    any other high bit)."""
    type_ = ctx.int32(type_) & 0xFFFFFFFF
    flags = type_ & ~SOCK_TYPE_MASK
    if flags & ~(SOCK_CLOEXEC | SOCK_NONBLOCK):
        raise GuestErrno(E.EINVAL)
    return type_ & SOCK_TYPE_MASK, flags


def _unix_type(ctx, domain: int, sock_type: int, protocol: int) -> int:
    """The family's checks (__sock_create, unix_create): EAFNOSUPPORT for an unmodeled
    family, EPROTONOSUPPORT for a protocol other than 0/PF_UNIX, ESOCKTNOSUPPORT for an
    unknown type; SOCK_RAW is taken as SOCK_DGRAM, as unix_create does."""
    if ctx.int32(domain) != AF_UNIX:
        raise GuestErrno(E.EAFNOSUPPORT)
    if ctx.int32(protocol) not in (0, AF_UNIX):
        raise GuestErrno(E.EPROTONOSUPPORT)
    if sock_type == SOCK_RAW:
        return SOCK_DGRAM
    if sock_type not in UNIX_TYPES:
        raise GuestErrno(E.ESOCKTNOSUPPORT)
    return sock_type


def _inet_type(ctx, sock_type: int, protocol: int) -> int:
    """inet_create(): TCP for SOCK_STREAM, UDP (or UDP-Lite) for SOCK_DGRAM (protocol 0 or
    one that matches: EPROTONOSUPPORT otherwise); raw sockets are raw.py's, other types are
    not modeled."""
    protocol = ctx.int32(protocol)
    if sock_type not in INET_PROTOCOLS:
        raise GuestErrno(E.ESOCKTNOSUPPORT if sock_type != SOCK_RAW else E.EPROTONOSUPPORT)
    if protocol not in (0, INET_PROTOCOLS[sock_type]) and \
            (sock_type, protocol) != (SOCK_DGRAM, IPPROTO_UDPLITE):
        raise GuestErrno(E.EPROTONOSUPPORT)
    return sock_type


def note_unreachable(kernel):
    """The run's one-line note, the first time a guest reaches for a host outside."""
    def note(name) -> None:
        if not getattr(kernel, "network_noted", False) and hasattr(kernel, "report"):
            kernel.network_noted = True
            kernel.report(f"the sandbox's network is loopback only: {name.text()} is "
                          f"unreachable (ENETUNREACH)")
    return note


def _new_socket(ctx, sock_type: int, flags: int, family: int = AF_UNIX) -> UnixSocket:
    nonblocking = bool(flags & SOCK_NONBLOCK)
    if family == AF_UNIX:
        sock = UnixSocket(ctx.kernel, sock_type, ctx.kernel.next_pipe_ino(),
                          nonblocking=nonblocking)
    else:
        ctx.kernel.note_unreachable = note_unreachable(ctx.kernel)
        sock = InetSocket(ctx.kernel, family, sock_type, ctx.kernel.next_pipe_ino(),
                          nonblocking=nonblocking)
    sock.net = getattr(ctx.proc, "net_ns", None)    # sock_net: its creator's network
    return sock


@syscall("socket", args=(("domain", K.INT), ("type", K.INT), ("protocol", K.INT)))
def sys_socket(ctx, domain, type_, protocol):
    sock_type, flags = _split_type(ctx, type_)
    family = ctx.int32(domain)
    if family == AF_NETLINK:
        return _netlink_socket(ctx, sock_type, ctx.int32(protocol), flags)
    if family == AF_PACKET:
        return _packet_socket(ctx, sock_type, ctx.int32(protocol), flags)
    if family in INET_FAMILIES and sock_type == SOCK_RAW:
        return _raw_socket(ctx, family, ctx.int32(protocol), flags)
    if family in INET_FAMILIES:
        sock_type = _inet_type(ctx, sock_type, protocol)
    else:
        sock_type = _unix_type(ctx, domain, sock_type, protocol)
    fd = ctx.proc.fds.lowest_free()
    sock = _new_socket(ctx, sock_type, flags, family)
    sock.landlock_domain = landlock.domain_of(ctx.thread)   # the file's f_cred, for the scopes
    return ctx.proc.fds.install(sock, at=fd, cloexec=bool(flags & SOCK_CLOEXEC))


def _netlink_socket(ctx, sock_type: int, protocol: int, flags: int) -> int:
    check_create(sock_type, protocol)
    fd = ctx.proc.fds.lowest_free()
    sock = NetlinkSocket(ctx.kernel, sock_type, protocol, ctx.kernel.next_pipe_ino(),
                         nonblocking=bool(flags & SOCK_NONBLOCK))
    sock.net = getattr(ctx.proc, "net_ns", None)
    return ctx.proc.fds.install(sock, at=fd, cloexec=bool(flags & SOCK_CLOEXEC))


def _raw_socket(ctx, family: int, protocol: int, flags: int) -> int:
    check_raw(protocol, net_capable(ctx, CAP_NET_RAW))
    fd = ctx.proc.fds.lowest_free()
    ctx.kernel.note_unreachable = note_unreachable(ctx.kernel)
    sock = RawSocket(ctx.kernel, family, protocol, ctx.kernel.next_pipe_ino(),
                     nonblocking=bool(flags & SOCK_NONBLOCK))
    sock.net = getattr(ctx.proc, "net_ns", None)
    sock.register()
    return ctx.proc.fds.install(sock, at=fd, cloexec=bool(flags & SOCK_CLOEXEC))


def _packet_socket(ctx, sock_type: int, protocol: int, flags: int) -> int:
    check_packet(sock_type, net_capable(ctx, CAP_NET_RAW))
    fd = ctx.proc.fds.lowest_free()
    sock = PacketSocket(ctx.kernel, sock_type, protocol, ctx.kernel.next_pipe_ino(),
                        nonblocking=bool(flags & SOCK_NONBLOCK))
    sock.net = getattr(ctx.proc, "net_ns", None)
    return ctx.proc.fds.install(sock, at=fd, cloexec=bool(flags & SOCK_CLOEXEC))


@syscall("socketpair", args=(("domain", K.INT), ("type", K.INT), ("protocol", K.INT),
                             ("sv", K.PIPEFD_OUT)))
def sys_socketpair(ctx, domain, type_, protocol, sv):
    sock_type, flags = _split_type(ctx, type_)
    if ctx.int32(domain) == AF_NETLINK:
        check_create(sock_type, ctx.int32(protocol))
        raise GuestErrno(E.EOPNOTSUPP)          # netlink_ops: sock_no_socketpair
    if ctx.int32(domain) in INET_FAMILIES:
        # __sys_socketpair creates both sockets first (inet_create's protocol checks), then
        # asks the family, whose socketpair is sock_no_socketpair
        _inet_type(ctx, sock_type, protocol)
        raise GuestErrno(E.EOPNOTSUPP)
    sock_type = _unix_type(ctx, domain, sock_type, protocol)
    if not ctx.writable(sv, 8):
        raise GuestErrno(E.EFAULT)       # both fds or none (as pipe2)
    fds = ctx.proc.fds
    first = fds.lowest_free()
    second = fds.lowest_free(first + 1)
    a, b = _new_socket(ctx, sock_type, flags), _new_socket(ctx, sock_type, flags)
    pair(a, b)
    a.peercred = b.peercred = caller_creds(ctx)     # unix_socketpair: init_peercred on both
    cloexec = bool(flags & SOCK_CLOEXEC)
    fds.install(a, cloexec=cloexec, at=first)
    fds.install(b, cloexec=cloexec, at=second)
    ctx.write(sv, struct.pack("<ii", first, second))
    return 0


@syscall("bind", args=(("sockfd", K.FD), ("addr", K.STRUCT), ("addrlen", K.UINT)))
def sys_bind(ctx, fd, addr, addrlen):
    sock = sock_of(ctx, fd)
    raw = read_sockaddr(ctx, addr, addrlen)
    if isinstance(sock, NetlinkSocket):
        sock.bind_netlink(raw, ctx.proc.pid)
        return 0
    if isinstance(sock, PacketSocket):
        sock.bind_packet(raw)
        return 0
    if isinstance(sock, InetSocket):
        _landlock_tcp(ctx, sock, raw, connect=False)
        sock.bind_inet(sock.parse(raw), net_capable(ctx, CAP_NET_BIND_SERVICE))
        return 0
    names = unix_names(ctx)
    if is_autobind_request(raw):
        if sock.name is None:
            sock.bind(names.autobind(sock), None)
        return 0
    name = parse(raw)
    if sock.name is not None:
        raise GuestErrno(E.EINVAL)       # unix_bind: already bound
    if name.abstract:
        names.bind_abstract(name, sock)
        sock.bind(name, None)
        return 0
    mode = 0o777 & ~ctx.proc.umask       # the socket inode's S_IFSOCK|0777 under the umask
    key = names.bind_path(ctx.kernel.fs, name, mode, ctx.proc.cwd, fs_view(ctx.proc), sock)
    sock.bind(name, key)
    return 0


@syscall("listen", args=(("sockfd", K.FD), ("backlog", K.INT)))
def sys_listen(ctx, fd, backlog):
    sock = sock_of(ctx, fd)
    backlog = ctx.int32(backlog) & 0xFFFFFFFF
    sock.listen(min(backlog, SOMAXCONN), caller_creds(ctx))   # __sys_listen caps at somaxconn
    return 0


@syscall("connect", args=(("sockfd", K.FD), ("addr", K.STRUCT), ("addrlen", K.UINT)))
def sys_connect(ctx, fd, addr, addrlen):
    sock = sock_of(ctx, fd)
    raw = read_sockaddr(ctx, addr, addrlen)
    if isinstance(sock, NetlinkSocket):
        sock.connect_netlink(raw, ctx.proc.pid)
        return 0
    if isinstance(sock, PacketSocket):
        raise GuestErrno(E.EOPNOTSUPP)              # packet_ops: sock_no_connect
    if isinstance(sock, InetSocket):
        _landlock_tcp(ctx, sock, raw, connect=True)
        sock.connect_inet(raw, caller_creds(ctx), ctx.kernel.next_pipe_ino(),
                          bool(sock.flags & SOCK_NONBLOCK))
        return 0
    if not sock.connection_based:
        return _connect_datagram(ctx, sock, raw)
    if len(raw) < 2:
        raise GuestErrno(E.EINVAL)
    server = find_raw(ctx, raw)
    _landlock_abstract(ctx, raw, server)
    sock.connect_stream(server, caller_creds(ctx), ctx.kernel.next_pipe_ino())
    return 0


def _connect_datagram(ctx, sock: UnixSocket, raw: bytes) -> int:
    """unix_dgram_connect(): AF_UNSPEC dissolves the association."""
    if len(raw) >= 2 and struct.unpack_from("<H", raw)[0] == AF_UNSPEC:
        sock.connect_datagram(None)
        return 0
    server = find_raw(ctx, raw)
    _landlock_abstract(ctx, raw, server)
    sock.connect_datagram(server)
    return 0


def _landlock_tcp(ctx, sock: InetSocket, raw: bytes, *, connect: bool) -> None:
    """security_socket_bind/connect before the family's own checks; Landlock looks at TCP
    sockets of AF_INET and AF_INET6 only (net.c current_check_access_socket), whose
    sockaddr holds the port at offset 2, in network order."""
    if sock.type == SOCK_STREAM and len(raw) >= 4 and \
            struct.unpack_from("<H", raw)[0] in INET_FAMILIES:
        landlock.check_tcp(ctx.thread, struct.unpack_from(">H", raw, 2)[0], connect=connect)


def _landlock_abstract(ctx, raw: bytes, server) -> None:
    """task.c hook_unix_stream_connect / hook_unix_may_send: an abstract name outside the
    caller's LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET sandbox is EPERM."""
    landlock.check_abstract_peer(ctx.thread, parse(raw).abstract,
                                 getattr(server, "landlock_domain", None))


@syscall("accept", args=(("sockfd", K.FD), ("addr", K.STRUCT), ("addrlen", K.INT_OUT)))
def sys_accept(ctx, fd, addr, addrlen):
    return _accept(ctx, fd, addr, addrlen, 0)


@syscall("accept4", args=(("sockfd", K.FD), ("addr", K.STRUCT), ("addrlen", K.INT_OUT),
                          ("flags", K.HEX)))
def sys_accept4(ctx, fd, addr, addrlen, flags):
    return _accept(ctx, fd, addr, addrlen, flags & 0xFFFFFFFF)


def _accept(ctx, fd, addr, addrlen, flags: int) -> int:
    if flags & ~(SOCK_CLOEXEC | SOCK_NONBLOCK):
        raise GuestErrno(E.EINVAL)
    listener = sock_of(ctx, fd)
    listener.check_accept()
    new_fd = ctx.proc.fds.lowest_free()  # EMFILE before a connection is taken
    check_sockaddr_out(ctx, addr, addrlen)
    sock = timed(ctx, listener, ("accept", id(listener)), SO_RCVTIMEO,
                 lambda: listener.accept(0))
    if flags & SOCK_NONBLOCK:
        sock.flags |= SOCK_NONBLOCK
    ctx.proc.fds.install(sock, at=new_fd, cloexec=bool(flags & SOCK_CLOEXEC))
    write_sockaddr(ctx, addr, addrlen, sock.peername())
    return new_fd


@syscall("getsockname", args=(("sockfd", K.FD), ("addr", K.STRUCT), ("addrlen", K.INT_OUT)))
def sys_getsockname(ctx, fd, addr, addrlen):
    sock = sock_of(ctx, fd)
    write_sockaddr(ctx, addr, addrlen, sock.sockname(), optional=False)
    return 0


@syscall("getpeername", args=(("sockfd", K.FD), ("addr", K.STRUCT), ("addrlen", K.INT_OUT)))
def sys_getpeername(ctx, fd, addr, addrlen):
    sock = sock_of(ctx, fd)
    write_sockaddr(ctx, addr, addrlen, sock.peername(), optional=False)
    return 0


@syscall("shutdown", args=(("sockfd", K.FD), ("how", K.INT)))
def sys_shutdown(ctx, fd, how):
    sock_of(ctx, fd).shutdown(ctx.int32(how))
    return 0
