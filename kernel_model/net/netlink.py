"""An AF_NETLINK socket (net/netlink/af_netlink.c): a datagram socket whose other end is the
kernel.

Only NETLINK_ROUTE (protocol 0) exists in the model (another protocol is EPROTONOSUPPORT, as
netlink_create answers for one no module registers); what a message to the kernel gets back is
rtnetlink.py's. The kernel also writes to a netlink socket on its own: mq_notify's SIGEV_THREAD
registration sends its cookie there (ipc/mqueue.c, glibc's helper thread reads it).

Addresses are struct sockaddr_nl {nl_family, nl_pad, nl_pid, nl_groups}: a socket's port id is
the one bind gives, or the first free of the process's tgid and then -4097, -4098... when it
first needs one (netlink_autobind, netlink_ports.py); the kernel's is 0, the source of everything received.
"""
import struct

from .. import errno as E
from ..errno import GuestErrno
from .constants import AF_NETLINK, AF_UNSPEC, MSG_OOB, SOCK_DGRAM, SOCK_RAW
from .message import Credentials, Message
from .netlink_ports import NetlinkPorts
from .unix import CONNECTED, UNCONNECTED, UnixSocket

NETLINK_ROUTE = 0
SOL_NETLINK = 270
SOCKADDR_NL = struct.Struct("<HHiI")            # family, pad, pid, groups (12 bytes)
KERNEL_NAME = SOCKADDR_NL.pack(AF_NETLINK, 0, 0, 0)
NETLINK_TYPES = (SOCK_RAW, SOCK_DGRAM)
KERNEL_CREDS = Credentials(0, 0, 0)             # NETLINK_CREDS of a kernel-made message
# include/uapi/linux/netlink.h: the SOL_NETLINK options (ADD/DROP_MEMBERSHIP, PKTINFO,
# BROADCAST_ERROR, NO_ENOBUFS, LISTEN_ALL_NSID, CAP_ACK, EXT_ACK, GET_STRICT_CHK); the flags of
# them netlink_getsockopt reads back as an int
NETLINK_ADD_MEMBERSHIP, NETLINK_DROP_MEMBERSHIP = 1, 2
SET_OPTIONS = {1, 2, 3, 4, 5, 8, 10, 11, 12}
FLAG_OPTIONS = {3, 4, 5, 8, 10, 11, 12}


def check_create(sock_type: int, protocol: int) -> None:
    """netlink_create(): SOCK_RAW or SOCK_DGRAM (ESOCKTNOSUPPORT), a protocol of the model's
    (EPROTONOSUPPORT)."""
    if sock_type not in NETLINK_TYPES:
        raise GuestErrno(E.ESOCKTNOSUPPORT)
    if protocol != NETLINK_ROUTE:
        raise GuestErrno(E.EPROTONOSUPPORT)


class NetlinkSocket(UnixSocket):
    family = AF_NETLINK
    protocol_name = b"NETLINK"          # af_netlink.c netlink_proto

    def __init__(self, kernel, sock_type: int, protocol: int, ino: int, *, nonblocking: bool):
        super().__init__(kernel, sock_type, ino, nonblocking=nonblocking)
        self.protocol = protocol
        self.portid = 0
        self.bound = False
        self.destination = 0                    # connect's nl_pid: the kernel unless set
        self.netlink_options: dict[int, int] = {}      # SOL_NETLINK flags

    def __repr__(self) -> str:
        return f"<NetlinkSocket {self.path.decode()} protocol={self.protocol} port={self.portid}>"

    @property
    def ports(self) -> NetlinkPorts:
        return (self.net or self.kernel).netlink_ports

    # ---- addresses --------------------------------------------------------------------------
    @staticmethod
    def parse(raw: bytes) -> tuple[int, int]:
        """A sockaddr_nl's (nl_pid, nl_groups): EINVAL when short or of another family."""
        if len(raw) < SOCKADDR_NL.size:
            raise GuestErrno(E.EINVAL)
        family, _, portid, groups = SOCKADDR_NL.unpack_from(raw)
        if family != AF_NETLINK:
            raise GuestErrno(E.EINVAL)
        return portid, groups

    def bind_netlink(self, raw: bytes, tgid: int) -> None:
        """netlink_bind(): a port id of its own (EADDRINUSE when taken), or 0 for the
        autobound one; binding again to another id is EINVAL."""
        portid, _ = self.parse(raw)
        if self.bound:
            if portid and portid != self.portid:
                raise GuestErrno(E.EINVAL)
            return
        if portid:
            self.ports.bind(self, portid)
        else:
            self.ports.autobind(self, tgid)
        self.bound = True

    def autobind(self, tgid: int) -> None:
        if not self.bound:
            self.ports.autobind(self, tgid)
            self.bound = True

    def connect_netlink(self, raw: bytes, tgid: int) -> None:
        """netlink_connect(): AF_UNSPEC dissolves; another address sets the destination."""
        if len(raw) >= 2 and struct.unpack_from("<H", raw)[0] == AF_UNSPEC:
            self.destination, self.state = 0, UNCONNECTED
            return
        self.destination, _ = self.parse(raw)
        self.autobind(tgid)
        self.state = CONNECTED

    def sockname(self) -> bytes:
        return SOCKADDR_NL.pack(AF_NETLINK, 0, self.portid, 0)

    def peername(self) -> bytes:
        return SOCKADDR_NL.pack(AF_NETLINK, 0, self.destination, 0)

    # ---- options ----------------------------------------------------------------------------
    def set_netlink_option(self, level: int, name: int, value: bytes) -> None:
        """netlink_setsockopt(): SOL_NETLINK only (ENOPROTOOPT); a value shorter than an int
        counts as 0. Memberships are taken and change nothing: the kernel multicasts no
        group in the model."""
        if level != SOL_NETLINK or name not in SET_OPTIONS:
            raise GuestErrno(E.ENOPROTOOPT)
        number = struct.unpack_from("<I", value)[0] if len(value) >= 4 else 0
        if name in FLAG_OPTIONS:
            self.netlink_options[name] = int(bool(number))

    # ---- data -------------------------------------------------------------------------------
    def send(self, data: bytes, flags: int, creds, *, files=(), target=None, named=False,
             raw: bytes | None = None) -> int:
        """netlink_sendmsg(): to the kernel, which answers into this socket's queue; a message
        to another port id is not modeled (ECONNREFUSED, as for one nobody holds)."""
        if flags & MSG_OOB:
            raise GuestErrno(E.EOPNOTSUPP)
        destination = self.parse(raw)[0] if raw else self.destination
        process = getattr(self.kernel.current, "process", None)
        self.autobind(process.pid if process is not None else 0)
        if destination != 0:
            raise GuestErrno(E.ECONNREFUSED)
        if len(data) > self.options.sndbuf - 32:
            raise GuestErrno(E.EMSGSIZE)
        from .rtnetlink import answer               # rtnetlink_rcv
        for reply in answer(bytes(data), self):
            self.deliver(reply)
        return len(data)

    def deliver(self, data: bytes) -> bool:
        """netlink_sendskb()/netlink_unicast() from the kernel: queued unless the receive
        buffer is full (then dropped, ENOBUFS for the reader, as netlink_overrun sets)."""
        if self.closed:
            return False
        if self.queue.buffered + len(data) > self.options.rcvbuf:
            self.error = E.ENOBUFS
            self._changed()
            return False
        self.queue.push(Message(data, KERNEL_CREDS))
        self._changed()
        return True

    def check_receivable(self, flags: int) -> None:
        if flags & MSG_OOB:
            raise GuestErrno(E.EOPNOTSUPP)

    def source(self, taken) -> bytes:
        return KERNEL_NAME

    def _unbind(self) -> None:
        if self.bound and self.kernel is not None:
            self.ports.release(self)



def netlink_option(sock: NetlinkSocket, level: int, name: int) -> bytes:
    """netlink_getsockopt(): a flag option's int (0 until set); ENOPROTOOPT for the rest."""
    if level != SOL_NETLINK or name not in FLAG_OPTIONS:
        raise GuestErrno(E.ENOPROTOOPT)
    return struct.pack("<i", sock.netlink_options.get(name, 0))
