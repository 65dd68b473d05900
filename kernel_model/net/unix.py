"""An AF_UNIX socket (net/unix/af_unix.c) as an open file description.

States follow Linux's sk_state: UNCONNECTED (TCP_CLOSE), LISTENING (TCP_LISTEN), CONNECTED
(TCP_ESTABLISHED). A connection is two sockets that are each other's `peer`; a stream or
seqpacket connect() makes the server's socket at once and queues it on the listener's
backlog (unix_stream_connect), so connect completes before accept, as on Linux.

Blocking: every operation that cannot go on raises WouldBlock naming the socket it waits on
and is executed again from scratch when woken (kernel_model/blocking.py), so each checks its
condition before changing anything. Any change a peer may wait for wakes both ends of the
connection (`_changed`): a reader sleeps on its own socket, a writer on its own socket too
(its room is in the peer's queue, whose reads wake it), poll on either.

Sizes: a stream send is cut into sk_buffs, each charged its true size (net/truesize.py) to the
sender's SO_SNDBUF while queued at its peer, and one more goes while the charge is below it (44
sends of 4 KiB on a socketpair, as on Linux); like a pipe's large write (fs/pipe.py), a blocking
send that finds the buffer full half-way returns its short count rather than sleep half-way. A datagram costs SKB_COST + its length rounded to 64 bytes of the sender's
SO_SNDBUF while queued, which gives the 278 one-byte datagrams a socketpair takes on Linux.
"""
from .. import errno as E
from ..blocking import WouldBlock
from ..errno import GuestErrno
from ..fdtable import retain_file
from ..fs.constants import BLOCK_SIZE, O_NONBLOCK, O_RDWR, S_IFSOCK
from ..fs.pipe import BrokenPipe
from ..fs.records import StatResult
from ..readiness import (POLLERR, POLLHUP, POLLIN, POLLOUT, POLLRDNORM, POLLWRBAND,
                         POLLWRNORM)
from .address import UnixName, sockaddr_of
from .constants import (MAX_DGRAM_QLEN, MSG_DONTWAIT, MSG_NOSIGNAL, MSG_OOB, MSG_PEEK,
                        MSG_WAITALL,
                        RCV_SHUTDOWN, SEND_SHUTDOWN, SOCK_DGRAM, SOCK_SEQPACKET, SOCK_STREAM)
from .message import Credentials, Message
from .options import SocketOptions
from .queue import MessageQueue, StreamQueue, Taken
from .truesize import stream_skb
from ..fs.unseekable import Unseekable

UNCONNECTED, LISTENING, CONNECTED = "unconnected", "listening", "connected"
SHUTDOWN_MASK = RCV_SHUTDOWN | SEND_SHUTDOWN
POLLRDHUP = 0x2000
SOCK_DEV = 0x09                 # st_dev of sockfs inodes, as the host shows them
SKB_COST = 704                  # a small datagram's sk_buff overhead (truesize 768 for 1 byte)
NO_PEERCRED = Credentials(0, 0xFFFFFFFF, 0xFFFFFFFF)    # cred_to_ucred(NULL): uid/gid -1


def datagram_cost(size: int) -> int:
    return SKB_COST + -(-max(size, 1) // 64) * 64


class UnixSocket(Unseekable):
    is_tty = False
    net = None          # its network namespace (namespace.py); None: the initial one

    @property
    def protocol_name(self) -> bytes:
        """Its struct proto's name, sockfs's name of the inode (getxattr system.sockprotoname):
        af_unix.c unix_stream_proto for a stream socket, unix_dgram_proto for the others."""
        return b"UNIX-STREAM" if self.type == SOCK_STREAM else b"UNIX"

    def __init__(self, kernel, sock_type: int, ino: int, *, nonblocking: bool = False):
        self.kernel = kernel
        self.type = sock_type
        self.ino = ino
        self.flags = O_RDWR | (O_NONBLOCK if nonblocking else 0)
        self.path = self.proc_link = b"socket:[%d]" % ino
        self.closed = False
        self.state = UNCONNECTED
        self.peer: "UnixSocket | None" = None
        self.name: UnixName | None = None
        self.inode_key: tuple | None = None
        self.queue = StreamQueue() if sock_type == SOCK_STREAM else MessageQueue()
        self.backlog: list["UnixSocket"] = []
        self.max_backlog = MAX_DGRAM_QLEN if sock_type == SOCK_DGRAM else 0
        self.shutdown_bits = 0
        self.error = 0                  # sk_err: reported once, by the next call that looks
        self.options = SocketOptions()
        self.peercred = NO_PEERCRED
        self.listen_creds = NO_PEERCRED
        self.in_flight = 0              # sk_wmem_alloc: true size of what it sent, still queued
        self.generation = 0             # state changes, for epoll's EPOLLET

    def __repr__(self) -> str:
        return f"<UnixSocket {self.path.decode()} type={self.type} {self.state}>"

    # ---- helpers -------------------------------------------------------------------------------
    @property
    def wait_channel(self) -> "UnixSocket":
        return self

    @property
    def connection_based(self) -> bool:
        return self.type in (SOCK_STREAM, SOCK_SEQPACKET)

    def _nonblocking(self, flags: int) -> bool:
        return bool(self.flags & O_NONBLOCK or flags & MSG_DONTWAIT)

    def _changed(self) -> None:
        self.generation += 1
        self.kernel.wakeup(self)
        if self.peer is not None:
            self.peer.generation += 1
            self.kernel.wakeup(self.peer)

    def _wait(self, flags: int, what: str, channel=None):
        if self._nonblocking(flags):
            raise GuestErrno(E.EAGAIN)
        raise WouldBlock(channel or self, f"{what} on {self.path.decode()}")

    def take_error(self) -> int:
        error, self.error = self.error, 0
        return error

    def current_creds(self) -> Credentials:
        """The calling process's credentials (read/write have no context to pass them)."""
        thread = getattr(self.kernel, "current", None)
        return creds_of(thread.process) if thread is not None else NO_PEERCRED

    # ---- names and connections -----------------------------------------------------------------
    def bind(self, name: UnixName, key: tuple | None) -> None:
        self.name, self.inode_key = name, key

    def listen(self, backlog: int, creds: Credentials) -> None:
        """unix_listen(): stream and seqpacket only (EOPNOTSUPP), bound (EINVAL), not connected."""
        if not self.connection_based:
            raise GuestErrno(E.EOPNOTSUPP)
        if self.name is None or self.state == CONNECTED:
            raise GuestErrno(E.EINVAL)
        self.state = LISTENING
        self.max_backlog = backlog
        self.listen_creds = creds
        self._changed()                  # a bigger backlog may let sleeping connects in

    def connect_stream(self, server: "UnixSocket", creds: Credentials, embryo_ino: int) -> None:
        """unix_stream_connect(): the server's end is made now and waits on the listener's
        backlog; full backlog sleeps (or EAGAIN)."""
        if self.state == CONNECTED:
            raise GuestErrno(E.EISCONN)
        if self.state == LISTENING:
            raise GuestErrno(E.EINVAL)
        if server.type != self.type:
            raise GuestErrno(E.EPROTOTYPE)
        if server.state != LISTENING or server.closed:
            raise GuestErrno(E.ECONNREFUSED)
        if len(server.backlog) > server.max_backlog:
            self._wait(0, "connect", server)
        embryo = self._embryo(server, embryo_ino)
        embryo.peercred = creds
        embryo.options.sndbuf = server.options.sndbuf
        self.peercred = server.listen_creds
        pair(self, embryo)
        server.backlog.append(embryo)
        server._changed()

    def _embryo(self, server: "UnixSocket", ino: int) -> "UnixSocket":
        """The server's end of a new connection: it shows the listener's address."""
        embryo = UnixSocket(self.kernel, self.type, ino)
        embryo.net = self.net
        embryo.name = server.name
        return embryo

    def check_accept(self) -> None:
        """unix_accept/inet_accept refuse before anything is copied: EOPNOTSUPP for a
        datagram socket, EINVAL for one not listening."""
        if not self.connection_based:
            raise GuestErrno(E.EOPNOTSUPP)
        if self.state != LISTENING:
            raise GuestErrno(E.EINVAL)

    def accept(self, flags: int) -> "UnixSocket":
        self.check_accept()
        if not self.backlog:
            self._wait(flags, "accept")
        sock = self.backlog.pop(0)
        self._changed()                  # room in the backlog for a sleeping connect
        return sock

    def connect_datagram(self, target: "UnixSocket | None") -> None:
        """unix_dgram_connect(): set (or, AF_UNSPEC, clear) the default destination."""
        if target is not None and target.type != self.type:
            raise GuestErrno(E.EPROTOTYPE)
        old, self.peer = self.peer, target
        self.state = CONNECTED if target is not None else UNCONNECTED
        if old is not None:
            self.kernel.wakeup(old)

    def shutdown(self, how: int) -> None:
        """unix_shutdown(): SHUT_RD/WR/RDWR become RCV/SEND bits; a connection-based peer gets
        the mirror bits (our SEND is its RCV)."""
        if how not in (0, 1, 2):
            raise GuestErrno(E.EINVAL)
        mode = how + 1
        self.shutdown_bits |= mode
        peer = self.peer
        if peer is not None and self.connection_based:
            mirror = (RCV_SHUTDOWN if mode & SEND_SHUTDOWN else 0) | \
                     (SEND_SHUTDOWN if mode & RCV_SHUTDOWN else 0)
            peer.shutdown_bits |= mirror
        self._changed()

    def sockname(self) -> bytes:
        return sockaddr_of(self.name)

    def peername(self) -> bytes:
        if self.peer is None or self.state != CONNECTED:
            raise GuestErrno(E.ENOTCONN)
        return sockaddr_of(self.peer.name)

    # ---- sending -------------------------------------------------------------------------------
    def send(self, data: bytes, flags: int, creds: Credentials, *, files=(),
             target: "UnixSocket | None" = None, named: bool = False) -> int:
        """sendmsg: `target` is the socket msg_name found (`named`), else the peer."""
        if flags & MSG_OOB and self.type != SOCK_STREAM:
            raise GuestErrno(E.EOPNOTSUPP)     # datagrams have no urgent data
        if self.type == SOCK_STREAM:
            return self._send_stream(data, flags, creds, list(files), named)
        if self.type == SOCK_SEQPACKET:
            error = self.take_error()
            if error:
                raise GuestErrno(error)
            if self.state != CONNECTED:
                raise GuestErrno(E.ENOTCONN)
            target = None                # unix_seqpacket_sendmsg ignores msg_name
        return self._send_datagram(data, flags, creds, list(files), target)

    def _send_stream(self, data, flags, creds, files, named: bool) -> int:
        if named:
            raise GuestErrno(E.EISCONN if self.state == CONNECTED else E.EOPNOTSUPP)
        peer = self.peer
        if peer is None:
            raise GuestErrno(E.ENOTCONN)
        if self.shutdown_bits & SEND_SHUTDOWN or peer.closed or peer.shutdown_bits & RCV_SHUTDOWN:
            self._broken(flags)
        if not data:
            return 0
        sent = 0
        while sent < len(data):
            # sock_alloc_send_pskb: a piece goes while the sender's wmem is below its SO_SNDBUF
            if self.in_flight >= self.options.sndbuf:
                if sent:
                    break
                self._wait(flags, "send")
            size, cost = stream_skb(len(data) - sent, self.options.sndbuf)
            # the files ride with the first piece (unix_scm_to_skb(..., !fds_sent))
            peer.queue.push(Message(bytes(data[sent:sent + size]), creds, [] if sent else files,
                                    origin=self, cost=cost))
            self.in_flight += cost
            sent += size
        self._changed()
        return sent

    def _broken(self, flags: int):
        """The pipe_err path: EPIPE, with SIGPIPE to the sender unless MSG_NOSIGNAL."""
        if flags & MSG_NOSIGNAL:
            raise GuestErrno(E.EPIPE)
        raise BrokenPipe(self.path)

    def _send_datagram(self, data, flags, creds, files, target) -> int:
        if len(data) > self.options.sndbuf - 32:
            raise GuestErrno(E.EMSGSIZE)
        other = target if target is not None else self.peer
        if other is None:
            raise GuestErrno(E.ENOTCONN)
        if other.closed:
            if self.type == SOCK_SEQPACKET:
                raise GuestErrno(E.EPIPE)    # a seqpacket connection is gone: no SIGPIPE
            if other is self.peer:
                self.peer, self.state = None, UNCONNECTED   # unix_dgram_disconnected
            raise GuestErrno(E.ECONNREFUSED)
        if other.peer is not None and other.peer is not self and other is not self:
            raise GuestErrno(E.EPERM)    # unix_may_send: it only takes from its own peer
        if self.shutdown_bits & SEND_SHUTDOWN or other.shutdown_bits & RCV_SHUTDOWN:
            raise GuestErrno(E.EPIPE)
        if other is not self and other.peer is not self and len(other.queue) > other.max_backlog:
            self._wait(flags, "send", other)
        if self.in_flight >= self.options.sndbuf:
            self._wait(flags, "send")
        message = Message(bytes(data), creds, files, sender=self.name, origin=self,
                          cost=datagram_cost(len(data)))
        self.in_flight += message.cost
        other.queue.push(message)
        other._changed()
        return len(data)

    # ---- receiving -----------------------------------------------------------------------------
    def check_receivable(self, flags: int) -> None:
        """What recv refuses before it looks at the caller's buffer: a listening or never
        connected stream (EINVAL; seqpacket ENOTCONN), out-of-band data that never comes
        (stream: EINVAL, unix_stream_recv_urg; datagrams: EOPNOTSUPP)."""
        if self.state == LISTENING:
            raise GuestErrno(E.EINVAL)
        if self.type == SOCK_STREAM and self.state != CONNECTED:
            raise GuestErrno(E.EINVAL)
        if self.type == SOCK_SEQPACKET and self.state != CONNECTED:
            raise GuestErrno(E.ENOTCONN)
        if flags & MSG_OOB:
            raise GuestErrno(E.EINVAL if self.type == SOCK_STREAM else E.EOPNOTSUPP)

    def recv(self, n: int, flags: int) -> Taken:
        self.check_receivable(flags)
        if self.queue and not self._waits_for_more(n, flags):
            return self._take(n, flags)
        if self.queue:
            self._wait(flags, "recv")
        error = self.take_error()
        if error:
            raise GuestErrno(error)
        if self.shutdown_bits & RCV_SHUTDOWN:
            return Taken(b"")            # end of file
        self._wait(flags, "recv")

    def _waits_for_more(self, n: int, flags: int) -> bool:
        """MSG_WAITALL on a stream: sleep until the whole count is queued, or the peer can add
        no more (its send buffer is full, it shut down or closed): then the short count."""
        if not flags & MSG_WAITALL or self.type != SOCK_STREAM or flags & MSG_PEEK:
            return False
        peer = self.peer
        more_can_come = peer is not None and not peer.closed and \
            not self.shutdown_bits & RCV_SHUTDOWN and peer.in_flight < peer.options.sndbuf
        return self.queue.buffered < n and more_can_come

    def _take(self, n: int, flags: int) -> Taken:
        peek = bool(flags & MSG_PEEK)
        messages = getattr(self.queue, "messages", None)
        first = messages[0] if messages else None
        taken = self.queue.take(n, peek=peek, split_creds=self.options.passcred)
        if peek:
            for f in taken.files:        # the message keeps its own: the caller gets more
                retain_file(f)
        else:
            origin = getattr(first, "origin", None)
            if origin is not None:
                first.settle()
                self.kernel.wakeup(origin)
            self._changed()
        return taken

    def source(self, taken: Taken) -> bytes:
        """The sender's address recvfrom/recvmsg report: none (length 0) when it has no name
        (unix_copy_addr); a stream's sender is its peer."""
        sender = taken.sender if self.type != SOCK_STREAM else \
            (self.peer.name if self.peer is not None else None)
        return sender.sockaddr() if sender is not None else b""

    def available(self) -> int:
        """FIONREAD/SIOCINQ: a stream's queued bytes, a datagram socket's next message's."""
        if self.type == SOCK_STREAM:
            return self.queue.buffered
        return len(self.queue.messages[0].data) if self.queue else 0

    # ---- the file interface --------------------------------------------------------------------
    def ioctl(self, ctx, request: int, arg: int) -> int:
        from .sock_ioctl import socket_ioctl     # sock_ioctl: on first use, not at start-up
        return socket_ioctl(ctx, self, request, arg)

    def read(self, n: int) -> bytes:
        return self.recv(n, 0).data

    def write(self, data: bytes) -> int:
        return self.send(bytes(data), 0, self.current_creds())

    def poll_events(self) -> int:
        """unix_poll() and unix_dgram_poll()."""
        mask = POLLERR if self.error else 0
        if self.shutdown_bits == SHUTDOWN_MASK:
            mask |= POLLHUP
        if self.shutdown_bits & RCV_SHUTDOWN:
            mask |= POLLRDHUP | POLLIN | POLLRDNORM
        if self.queue or self.backlog:
            mask |= POLLIN | POLLRDNORM
        if self.connection_based and self.state == UNCONNECTED:
            mask |= POLLHUP
        if self._writable():
            mask |= POLLOUT | POLLWRNORM | POLLWRBAND
        return mask

    def _writable(self) -> bool:
        if self.state == LISTENING:
            return False
        if self.type == SOCK_STREAM:
            return self.in_flight << 2 <= self.options.sndbuf       # unix_writable
        if self.in_flight << 2 > self.options.sndbuf:
            return False
        other = self.peer
        return not (other is not None and other.peer is not self and not other.closed
                    and len(other.queue) > other.max_backlog)

    def stat(self) -> StatResult:
        return StatResult(SOCK_DEV, self.ino, S_IFSOCK | 0o777, 1, 0, 0, 0, 0, BLOCK_SIZE,
                          0, 0, 0, 0)

    def close(self) -> None:
        """unix_release_sock(): the last fd went. A connection-based peer is shut down both
        ways, with ECONNRESET when we leave unread data (or were never accepted); queued
        messages and never-accepted connections go."""
        if self.closed:
            return
        self._release(embryo=False)

    def _release(self, *, embryo: bool) -> None:
        self.closed = True
        self._unbind()
        peer = self.peer
        if peer is not None and self.connection_based:
            peer.shutdown_bits = SHUTDOWN_MASK
            if self.queue or embryo:
                peer.error = E.ECONNRESET
        for origin in {id(m.origin): m.origin for m in getattr(self.queue, "messages", ())
                       if m.origin is not None}.values():
            self.kernel.wakeup(origin)
        self.queue.drop_all()
        for pending in self.backlog:
            pending._release(embryo=True)
        self.backlog.clear()
        self.state = UNCONNECTED
        self._changed()


    def _unbind(self) -> None:
        names = getattr(self.net or self.kernel, "unix_names", None)
        if names is not None:
            names.unbind(self.name, self.inode_key, self)


def pair(a: UnixSocket, b: UnixSocket) -> None:
    a.peer, b.peer = b, a
    a.state = b.state = CONNECTED


def creds_of(process) -> Credentials:
    """A process's struct ucred: its pid (tgid) and its effective user and group ids
    (net/core/sock.c cred_to_ucred)."""
    creds = getattr(process, "creds", None)
    return Credentials(process.pid, creds.euid if creds else 0, creds.egid if creds else 0)
