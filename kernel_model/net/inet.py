"""TCP and UDP sockets on the sandbox's loopback network (AF_INET, AF_INET6).

Both ends are always inside the sandbox, so a TCP connection is what an AF_UNIX stream
connection is (unix.py: queues, blocking, EPIPE/SIGPIPE, ECONNRESET on unread data, poll);
what differs is said here: addresses are sockaddr_in/in6 with ports (inet_ports.py), an
unbound socket takes an ephemeral port when it listens, connects or sends (inet_autobind), a
non-blocking connect answers EINPROGRESS (the connection is then already made: loopback), a
stream socket never connected fails recv with ENOTCONN and send with EPIPE, and UDP drops
what nobody can take: a datagram to a port without a socket (a connected sender then gets
ECONNREFUSED, the ICMP port-unreachable's error), or to a full receive buffer.

Any other address is unreachable: ENETUNREACH, noted once in the run's report.
"""
from .. import errno as E
from ..errno import GuestErrno
from .constants import (AF_INET6, MSG_ERRQUEUE, MSG_MORE, MSG_NOSIGNAL, MSG_OOB, SO_REUSEADDR,
                        SOCK_DGRAM, SOCK_STREAM)
from .inet_address import LOOPBACK, InetName, in_family, parse, unbound
from .namespace import lo_is_up
from .message import Message
from .queue import Taken
from .unix import CONNECTED, LISTENING, SHUTDOWN_MASK, UNCONNECTED, UnixSocket

UDP_MAX_PAYLOAD = 65507             # 65535 - IP header (20) - UDP header (8)
UNPRIVILEGED_PORT_START = 1024      # net.ipv4.ip_unprivileged_port_start's default


class InetSocket(UnixSocket):
    def __init__(self, kernel, family: int, sock_type: int, ino: int, *, nonblocking: bool):
        super().__init__(kernel, sock_type, ino, nonblocking=nonblocking)
        self.family = family
        self.peer_name: InetName | None = None      # UDP's connected destination
        self.reset_seen = False                     # TCP: a write after the peer closed
        self.corked = b""                           # MSG_MORE: bytes held for the next send
        self.multicast_groups: set[bytes] = set()   # joined groups (protocol_options.py)
        self.port_locked = False                    # bound to a port the user named

    @property
    def ports(self):
        return (self.net or self.kernel).inet_ports

    @property
    def protocol_name(self) -> bytes:
        """tcp_prot, udp_prot and their IPv6 twins (tcpv6_prot "TCPv6", udpv6_prot)."""
        return (b"UDP" if self.type == SOCK_DGRAM else b"TCP") + (
            b"v6" if self.family == AF_INET6 else b"")

    # ---- addresses --------------------------------------------------------------------------
    def parse(self, raw: bytes) -> InetName:
        return parse(raw, self.family)

    def reachable(self, name: InetName) -> InetName:
        """The loopback address `name` stands for (0.0.0.0 reaches the local host too);
        ENETUNREACH for any other host."""
        if not lo_is_up(self):
            raise GuestErrno(E.ENETUNREACH)          # no route while lo is down (namespace.py)
        if name.is_any or name.is_loopback:
            return InetName(self.family, LOOPBACK[self.family] if name.is_any else name.host,
                            name.port)
        note = getattr(self.kernel, "note_unreachable", None)
        if note is not None:
            note(name)
        raise GuestErrno(E.ENETUNREACH)

    def bind_inet(self, name: InetName, may_bind_privileged: bool = True) -> None:
        """__inet_bind(): EADDRNOTAVAIL for an address that is not the sandbox's, EACCES for
        a port under ip_unprivileged_port_start (1024) without CAP_NET_BIND_SERVICE
        (`may_bind_privileged`), EINVAL when bound already, EADDRINUSE for a port taken."""
        if not (name.is_any or name.is_loopback):
            raise GuestErrno(E.EADDRNOTAVAIL)
        if 0 < name.port < UNPRIVILEGED_PORT_START and not may_bind_privileged:
            raise GuestErrno(E.EACCES)
        if self.name is not None:
            raise GuestErrno(E.EINVAL)
        reuse = bool(self.options.flags.get(SO_REUSEADDR))
        port = self.ports.bind(self.type, name.port, self, reuse=reuse)
        self.name = name.with_port(port)
        self.port_locked = name.port != 0        # SOCK_BINDPORT_LOCK: the user chose it

    def autobind(self) -> None:
        if self.name is None:
            self.bind_inet(unbound(self.family))

    def _bind_source(self) -> None:
        """connect() picks the source address: the loopback host, on the bound or an
        ephemeral port (getsockname shows 127.0.0.1 from then on)."""
        self.autobind()
        if self.name.is_any:
            self.name = self.reachable(self.name)

    def local_name(self) -> InetName:
        """The address the other end sees: the bound port on the loopback host."""
        return self.reachable(self.name.with_port(self.name.port))

    def sockname(self) -> bytes:
        return (self.name or unbound(self.family)).sockaddr()

    def peername(self) -> bytes:
        if self.state != CONNECTED:
            raise GuestErrno(E.ENOTCONN)
        if self.type == SOCK_DGRAM:
            return self.peer_name.sockaddr()
        return self.peer_address().sockaddr()

    def peer_address(self) -> InetName:
        """A TCP peer's address as this socket's family shows it (v4-mapped for an IPv6
        socket an IPv4 one reached)."""
        return in_family(self.peer.local_name(), self.family)

    # ---- connections ------------------------------------------------------------------------
    def listen(self, backlog: int, creds) -> None:
        if self.type != SOCK_STREAM:
            raise GuestErrno(E.EOPNOTSUPP)
        self.autobind()
        super().listen(backlog, creds)

    def connect_inet(self, raw: bytes, creds, embryo_ino: int, nonblocking: bool) -> None:
        if self.type == SOCK_DGRAM:
            return self._connect_udp(raw)
        if len(raw) >= 2 and raw[:2] == b"\0\0":          # AF_UNSPEC: tcp_disconnect
            return self._disconnect()
        if self.state == CONNECTED:
            raise GuestErrno(E.EISCONN)
        target = self.reachable(self.parse(raw))
        server = self.ports.find(SOCK_STREAM, target.port)
        if server is None or server.state != LISTENING:
            raise GuestErrno(E.ECONNREFUSED)
        self._bind_source()
        self.connect_stream(server, creds, embryo_ino)
        # the accepted end's address is the one the client reached, in its listener's family
        self.peer.name = in_family(target, server.family)
        if nonblocking:
            raise GuestErrno(E.EINPROGRESS)     # made already: poll says POLLOUT, SO_ERROR 0

    def _connect_udp(self, raw: bytes) -> None:
        if len(raw) >= 2 and raw[:2] == b"\0\0":          # AF_UNSPEC: dissolve
            self.peer_name, self.state = None, UNCONNECTED
            return
        target = self.reachable(self.parse(raw))
        self._bind_source()
        self.peer_name, self.state = target, CONNECTED

    def _embryo(self, server: UnixSocket, ino: int) -> "InetSocket":
        """The accepted end: of the listener's family (an IPv6 listener takes IPv4 clients,
        with v4-mapped addresses), on its port, with its port lock (inet_csk_clone_lock)."""
        embryo = InetSocket(self.kernel, server.family, self.type, ino, nonblocking=False)
        embryo.net = self.net
        embryo.name = server.name        # shares the listener's port, as accepted TCP sockets do
        embryo.port_locked = server.port_locked
        return embryo

    def _disconnect(self) -> None:
        """connect(AF_UNSPEC) on a TCP socket (inet_stream_connect, tcp_disconnect): a
        connection is reset (the peer's next call says ECONNRESET), the socket is closed again
        and gives back a port the user did not choose (inet_put_port without
        SOCK_BINDPORT_LOCK), so that it may bind or connect anew."""
        peer = self.peer
        if peer is not None:
            peer.error, peer.peer, peer.state = E.ECONNRESET, None, UNCONNECTED
            peer.shutdown_bits = SHUTDOWN_MASK
            peer._changed()
        self.peer, self.state = None, UNCONNECTED
        self.queue.drop_all()
        if self.name is not None and not self.port_locked:
            self._unbind()
            self.name = None
        self._changed()

    def shutdown(self, how: int) -> None:
        """inet_shutdown: a bad `how` is EINVAL before the state is looked at (how + 1 must be a
        non-empty subset of SHUTDOWN_MASK), then an unconnected socket is ENOTCONN."""
        if how not in (0, 1, 2):
            raise GuestErrno(E.EINVAL)
        if self.state != CONNECTED:
            raise GuestErrno(E.ENOTCONN)
        super().shutdown(how)

    # ---- data -------------------------------------------------------------------------------
    def send(self, data: bytes, flags: int, creds, *, files=(), target=None, named=False,
             raw: bytes | None = None) -> int:
        if files:
            raise GuestErrno(E.EINVAL)           # SCM_RIGHTS is AF_UNIX's
        if self.type == SOCK_DGRAM and flags & MSG_OOB:
            raise GuestErrno(E.EOPNOTSUPP)
        if flags & MSG_MORE:
            return self._cork(data, flags, creds, raw)
        if self.corked:
            return self._uncork(data, flags, creds, raw)
        if self.type == SOCK_DGRAM:
            return self._send_udp(data, flags, creds, raw)
        if self.peer is None:
            error = self.take_error()
            if error:
                raise GuestErrno(error)              # sk_stream_wait_connect: sk_err first
            if self.state == LISTENING or flags & MSG_NOSIGNAL:
                raise GuestErrno(E.EPIPE)
            self._broken(flags)                  # sk_stream_wait_connect: EPIPE, SIGPIPE
        error = self.take_error()
        if error:
            raise GuestErrno(error)              # a reset already came back: ECONNRESET
        if self.peer.closed and not self.reset_seen and data:
            # The peer's FIN leaves us in CLOSE_WAIT, where a write still succeeds; the peer
            # answers it with a reset, and only the next write fails (EPIPE, SIGPIPE).
            self.reset_seen = True
            return len(data)
        return super().send(data, flags, creds)

    def _cork(self, data: bytes, flags: int, creds, raw: bytes | None) -> int:
        """MSG_MORE: hold the bytes until a send without it (tcp's corking, udp's pending
        datagram), after the checks the send would make."""
        if self.type == SOCK_STREAM and self.peer is None:
            return self.send(data, flags & ~MSG_MORE, creds)     # its error, as a send's
        if self.type == SOCK_DGRAM and not raw and self.peer_name is None and not self.corked:
            raise GuestErrno(E.EDESTADDRREQ)
        self.corked += bytes(data)
        return len(data)

    def _uncork(self, data: bytes, flags: int, creds, raw: bytes | None) -> int:
        """The send after MSG_MORE ones carries their bytes too; it returns its own count."""
        held, self.corked = self.corked, b""
        sent = self.send(held + bytes(data), flags, creds, raw=raw)
        return max(0, sent - len(held))

    def _send_udp(self, data: bytes, flags: int, creds, raw: bytes | None) -> int:
        if raw:
            target = self.reachable(self.parse(raw))
        elif self.peer_name is not None:
            target = self.peer_name
        else:
            raise GuestErrno(E.EDESTADDRREQ)
        if len(data) > UDP_MAX_PAYLOAD:
            raise GuestErrno(E.EMSGSIZE)
        self.autobind()
        receiver = self.ports.find(SOCK_DGRAM, target.port)
        sender = self.local_name()
        if receiver is None or receiver.closed:
            if self.peer_name is not None:
                self.error = E.ECONNREFUSED      # the port unreachable comes back
            return len(data)
        if receiver.peer_name is not None and receiver.peer_name != sender:
            return len(data)                     # a connected socket takes its peer's only
        if receiver.queue.buffered + len(data) <= receiver.options.rcvbuf:
            receiver.queue.push(Message(bytes(data), creds, sender=sender))
            receiver._changed()
        return len(data)

    def check_receivable(self, flags: int) -> None:
        """tcp_recvmsg/udp_recvmsg: the error queue is empty (EAGAIN), a TCP socket not
        connected is ENOTCONN, urgent data never comes (EINVAL)."""
        if flags & MSG_ERRQUEUE:
            raise GuestErrno(E.EAGAIN)
        if self.type == SOCK_STREAM and self.state != CONNECTED and not self._was_reset():
            raise GuestErrno(E.ENOTCONN)
        if flags & MSG_OOB:
            raise GuestErrno(E.EINVAL if self.type == SOCK_STREAM else E.EOPNOTSUPP)

    def _was_reset(self) -> bool:
        """A connection the peer reset (tcp_reset, then tcp_done) still answers a receive:
        ECONNRESET once, then the end of file."""
        return self.state == UNCONNECTED and self.shutdown_bits == SHUTDOWN_MASK

    def source(self, taken: Taken) -> bytes:
        """UDP: the sender's address; TCP reports none (tcp_recvmsg leaves msg_namelen 0)."""
        return taken.sender.sockaddr() if self.type == SOCK_DGRAM and taken.sender else b""

    def _unbind(self) -> None:
        if self.name is not None and self.kernel is not None:
            ports = getattr(self.net or self.kernel, "inet_ports", None)
            if ports is not None:
                ports.release(self.type, self.name.port, self)
