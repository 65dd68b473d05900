"""NETLINK_ROUTE's kernel side (net/core/rtnetlink.c) for the sandbox's one interface, lo.

The network is loopback only (inet.py), so the routing socket knows one link, lo (index 1,
ARPHRD_LOOPBACK, MTU 65536, up), and its two addresses, 127.0.0.1/8 and ::1/128. What
programs ask of it: `ip link set lo up` (RTM_GETLINK by name, then RTM_NEWLINK changing
IFF_UP), getifaddrs and if_nameindex (dumps of RTM_GETLINK and RTM_GETADDR). Other requests are
EOPNOTSUPP, as for a message type no handler is registered for.

netlink_rcv_skb walks the messages of one send: a message that is no request, or a control
message, is only acknowledged (when it asks, NLM_F_ACK); a request's error is always answered
(netlink_ack: struct nlmsgerr with the request echoed whole; a success only its header, flagged
NLM_F_CAPPED). A dump answers NLM_F_MULTI messages then NLMSG_DONE, and no acknowledgement.
"""
import struct

from .. import errno as E
from .constants import AF_INET, AF_INET6, AF_UNSPEC

NLMSGHDR = struct.Struct("<IHHII")              # len, type, flags, seq, pid
NLMSG_ERROR, NLMSG_DONE, NLMSG_MIN_TYPE = 2, 3, 0x10
NLM_F_REQUEST, NLM_F_MULTI, NLM_F_ACK, NLM_F_DUMP = 0x1, 0x2, 0x4, 0x300
NLM_F_CREATE, NLM_F_CAPPED = 0x400, 0x100
RTM_NEWLINK, RTM_GETLINK, RTM_NEWADDR, RTM_GETADDR, RTM_MAX = 16, 18, 20, 22, 0x7F
IFINFOMSG = struct.Struct("<BxHiII")            # family, type, index, flags, change
IFADDRMSG = struct.Struct("<BBBBi")             # family, prefixlen, flags, scope, index
IFLA_ADDRESS, IFLA_BROADCAST, IFLA_IFNAME, IFLA_MTU, IFLA_TXQLEN = 1, 2, 3, 4, 13
IFLA_OPERSTATE, IFLA_LINKMODE = 16, 17
IFA_ADDRESS, IFA_LOCAL, IFA_LABEL = 1, 2, 3
ARPHRD_LOOPBACK = 772
IFF_UP, IFF_LOOPBACK, IFF_RUNNING, IFF_LOWER_UP = 0x1, 0x8, 0x40, 0x10000
LO_INDEX, LO_NAME = 1, b"lo"
RT_SCOPE_HOST, IFA_F_PERMANENT = 254, 0x80
LO_ADDRESSES = ((AF_INET, 8, bytes([127, 0, 0, 1])), (AF_INET6, 128, bytes(15) + b"\x01"))


def _align(n: int) -> int:
    return (n + 3) & ~3


def _attr(kind: int, payload: bytes) -> bytes:
    """struct nlattr {u16 nla_len; u16 nla_type} and its payload, padded to 4."""
    raw = struct.pack("<HH", 4 + len(payload), kind) + payload
    return raw.ljust(_align(len(raw)), b"\0")


def _attrs(raw: bytes) -> dict[int, bytes]:
    found, at = {}, 0
    while at + 4 <= len(raw):
        length, kind = struct.unpack_from("<HH", raw, at)
        if length < 4 or at + length > len(raw):
            break
        found[kind & 0x3FFF] = raw[at + 4:at + length]
        at += _align(length)
    return found


def _message(kind: int, flags: int, seq: int, portid: int, body: bytes) -> bytes:
    return NLMSGHDR.pack(NLMSGHDR.size + len(body), kind, flags, seq, portid & 0xFFFFFFFF) + body


def answer(data: bytes, sock) -> list[bytes]:
    """The kernel's replies to one send on a NETLINK_ROUTE socket (netlink_rcv_skb)."""
    replies, at = [], 0
    while len(data) - at >= NLMSGHDR.size:
        length, kind, flags, seq, _ = NLMSGHDR.unpack_from(data, at)
        if length < NLMSGHDR.size or length > len(data) - at:
            break
        request = data[at:at + length]
        error = 0
        if flags & NLM_F_REQUEST and kind >= NLMSG_MIN_TYPE:
            error, answers = _handle(kind, flags, request[NLMSGHDR.size:], sock)
            replies += [_message(k, f, seq, sock.portid, body) for k, f, body in answers]
            if answers and flags & NLM_F_DUMP == NLM_F_DUMP and error == 0:
                at += _align(length)
                continue                            # a dump is not acknowledged
        if flags & NLM_F_ACK or error:
            replies.append(_ack(request, error, seq, sock.portid))
        at += _align(length)
    return replies


def _ack(request: bytes, error: int, seq: int, portid: int) -> bytes:
    """netlink_ack(): the error (negative) and the request, whole for an error, its header
    alone for a success (NLM_F_CAPPED)."""
    echoed = request if error else request[:NLMSGHDR.size]
    flags = 0 if error else NLM_F_CAPPED
    return _message(NLMSG_ERROR, flags, seq, portid, struct.pack("<i", -error) + echoed)


def _handle(kind: int, flags: int, body: bytes, sock) -> tuple[int, list]:
    """rtnetlink_rcv_msg(): (errno, [(type, flags, body)])."""
    if kind > RTM_MAX:
        return E.EOPNOTSUPP, []
    dump = flags & NLM_F_DUMP == NLM_F_DUMP
    if kind == RTM_GETLINK:
        if dump:
            return 0, [(RTM_NEWLINK, NLM_F_MULTI, _link(sock)), _done()]
        return _get_link(body, sock)
    if kind == RTM_NEWLINK:
        return _set_link(body, flags, sock)
    if kind == RTM_GETADDR and dump:
        family = body[0] if body else AF_UNSPEC
        addresses = [(RTM_NEWADDR, NLM_F_MULTI, _address(*a)) for a in LO_ADDRESSES
                     if family in (AF_UNSPEC, a[0])]
        return 0, addresses + [_done()]
    return E.EOPNOTSUPP, []


def _done() -> tuple:
    return NLMSG_DONE, NLM_F_MULTI, struct.pack("<i", 0)


def _named_link(body: bytes) -> int | None:
    """The link a request names: by index, else by IFLA_IFNAME; 0 when it names none,
    None when it names another (rtnl_getlink, rtnl_newlink: ENODEV)."""
    if len(body) < IFINFOMSG.size:
        return 0
    index = IFINFOMSG.unpack_from(body)[2]
    if index:
        return index if index == LO_INDEX else None
    name = _attrs(body[IFINFOMSG.size:]).get(IFLA_IFNAME)
    if name is None:
        return 0
    return LO_INDEX if name.rstrip(b"\0") == LO_NAME else None


def _get_link(body: bytes, sock) -> tuple[int, list]:
    index = _named_link(body)
    if index == 0:
        return E.EINVAL, []
    if index is None:
        return E.ENODEV, []
    return 0, [(RTM_NEWLINK, 0, _link(sock))]


def _ports(sock):
    """The socket's network namespace's netlink table, which keeps lo's state (net/namespace.py)."""
    return (getattr(sock, "net", None) or sock.kernel).netlink_ports


def _set_link(body: bytes, flags: int, sock) -> tuple[int, list]:
    """rtnl_newlink() on lo: ifi_change's bits of IFF_UP follow ifi_flags (do_setlink); no link
    can be made (NLM_F_CREATE: EOPNOTSUPP) and another is ENODEV."""
    index = _named_link(body)
    if not index:
        return (E.EOPNOTSUPP if flags & NLM_F_CREATE else E.ENODEV), []
    _, _, _, new_flags, change = IFINFOMSG.unpack_from(body)
    change = change or 0xFFFFFFFF
    if change & IFF_UP:
        _ports(sock).loopback_up = bool(new_flags & IFF_UP)
    return 0, []


def _link(sock) -> bytes:
    """RTM_NEWLINK's body for lo (rtnl_fill_ifinfo): the attributes tools read."""
    up = _ports(sock).loopback_up
    flags = IFF_LOOPBACK | (IFF_UP | IFF_RUNNING | IFF_LOWER_UP if up else 0)
    return IFINFOMSG.pack(AF_UNSPEC, ARPHRD_LOOPBACK, LO_INDEX, flags, 0) + b"".join((
        _attr(IFLA_IFNAME, LO_NAME + b"\0"), _attr(IFLA_TXQLEN, struct.pack("<I", 1000)),
        _attr(IFLA_OPERSTATE, b"\0"), _attr(IFLA_LINKMODE, b"\0"),
        _attr(IFLA_MTU, struct.pack("<I", _ports(sock).loopback_mtu)), _attr(IFLA_ADDRESS, bytes(6)),
        _attr(IFLA_BROADCAST, bytes(6))))


def _address(family: int, prefix: int, address: bytes) -> bytes:
    """RTM_NEWADDR's body (inet_fill_ifaddr, inet6_fill_ifaddr): lo's address, host scope."""
    attrs = _attr(IFA_ADDRESS, address)
    if family == AF_INET:
        attrs += _attr(IFA_LOCAL, address) + _attr(IFA_LABEL, LO_NAME + b"\0")
    return IFADDRMSG.pack(family, prefix, IFA_F_PERMANENT, RT_SCOPE_HOST, LO_INDEX) + attrs
