"""The socket calls' arguments as strace 6.x prints them (net.c, sockaddr.c, msghdr.c,
epoll.c, eventfd.c): address families and socket types by name, socket addresses
(`{sa_family=AF_UNIX, sun_path="server.sock"}`, `sin_port=htons(80), sin_addr=inet_addr(...)`),
socket options, MSG_* flags, struct msghdr with its control messages, epoll events.

Layouts are the kernel's (include/uapi/linux/socket.h, un.h, in.h, in6.h, eventpoll.h; struct
user_msghdr and cmsghdr with long-sized lengths); values from include/linux/socket.h, net.h.
"""
import ipaddress

from . import structs, xlat_style
from .strings import escape_bytes, format_address, format_buffer, read_word, read_words

AF_UNIX, AF_INET, AF_INET6 = 1, 2, 10
FAMILIES = {0: "AF_UNSPEC", AF_UNIX: "AF_UNIX", AF_INET: "AF_INET", AF_INET6: "AF_INET6",
            16: "AF_NETLINK", 17: "AF_PACKET"}
SOCK_TYPES = {1: "SOCK_STREAM", 2: "SOCK_DGRAM", 3: "SOCK_RAW", 4: "SOCK_RDM",
              5: "SOCK_SEQPACKET", 10: "SOCK_PACKET"}
SOCK_FLAGS = ((0o2000000, "SOCK_CLOEXEC"), (0o4000, "SOCK_NONBLOCK"))      # strace's order
IPPROTO = {0: "IPPROTO_IP", 1: "IPPROTO_ICMP", 6: "IPPROTO_TCP", 17: "IPPROTO_UDP",
           41: "IPPROTO_IPV6", 58: "IPPROTO_ICMPV6", 255: "IPPROTO_RAW"}
LEVELS = {1: "SOL_SOCKET", 0: "SOL_IP", 6: "SOL_TCP", 17: "SOL_UDP", 41: "SOL_IPV6"}
SOL_SOCKET, SOL_TCP = 1, 6
SOCKET_OPTIONS = {1: "SO_DEBUG", 2: "SO_REUSEADDR", 3: "SO_TYPE", 4: "SO_ERROR",
                  5: "SO_DONTROUTE", 6: "SO_BROADCAST", 7: "SO_SNDBUF", 8: "SO_RCVBUF",
                  9: "SO_KEEPALIVE", 10: "SO_OOBINLINE", 11: "SO_NO_CHECK", 12: "SO_PRIORITY",
                  13: "SO_LINGER", 14: "SO_BSDCOMPAT", 15: "SO_REUSEPORT", 16: "SO_PASSCRED",
                  17: "SO_PEERCRED", 18: "SO_RCVLOWAT", 19: "SO_SNDLOWAT",
                  20: "SO_RCVTIMEO_OLD", 21: "SO_SNDTIMEO_OLD", 30: "SO_ACCEPTCONN",
                  32: "SO_SNDBUFFORCE", 33: "SO_RCVBUFFORCE", 38: "SO_PROTOCOL", 39: "SO_DOMAIN"}
TCP_OPTIONS = {1: "TCP_NODELAY", 2: "TCP_MAXSEG", 3: "TCP_CORK", 4: "TCP_KEEPIDLE",
               5: "TCP_KEEPINTVL", 6: "TCP_KEEPCNT", 9: "TCP_DEFER_ACCEPT", 12: "TCP_QUICKACK"}
MSG_FLAGS = {0x1: "MSG_OOB", 0x2: "MSG_PEEK", 0x4: "MSG_DONTROUTE", 0x8: "MSG_CTRUNC",
             0x10: "MSG_PROBE", 0x20: "MSG_TRUNC", 0x40: "MSG_DONTWAIT", 0x80: "MSG_EOR",
             0x100: "MSG_WAITALL", 0x200: "MSG_FIN", 0x400: "MSG_SYN", 0x800: "MSG_CONFIRM",
             0x1000: "MSG_RST", 0x2000: "MSG_ERRQUEUE", 0x4000: "MSG_NOSIGNAL",
             0x8000: "MSG_MORE", 0x10000: "MSG_WAITFORONE", 0x20000: "MSG_BATCH",
             0x4000000: "MSG_ZEROCOPY", 0x20000000: "MSG_FASTOPEN",
             0x40000000: "MSG_CMSG_CLOEXEC"}
SHUT_HOW = {0: "SHUT_RD", 1: "SHUT_WR", 2: "SHUT_RDWR"}
EPOLL_OPS = {1: "EPOLL_CTL_ADD", 2: "EPOLL_CTL_DEL", 3: "EPOLL_CTL_MOD"}
EPOLL_EVENTS = {0x1: "EPOLLIN", 0x2: "EPOLLPRI", 0x4: "EPOLLOUT", 0x8: "EPOLLERR",
                0x10: "EPOLLHUP", 0x20: "EPOLLNVAL", 0x40: "EPOLLRDNORM", 0x80: "EPOLLRDBAND",
                0x100: "EPOLLWRNORM", 0x200: "EPOLLWRBAND", 0x400: "EPOLLMSG",
                0x2000: "EPOLLRDHUP", 1 << 28: "EPOLLEXCLUSIVE", 1 << 29: "EPOLLWAKEUP",
                1 << 30: "EPOLLONESHOT", 1 << 31: "EPOLLET"}
EPOLL_CREATE_FLAGS = ((0o2000000, "EPOLL_CLOEXEC"),)
EFD_FLAGS = ((1, "EFD_SEMAPHORE"), (0o2000000, "EFD_CLOEXEC"), (0o4000, "EFD_NONBLOCK"))
SCM_RIGHTS, SCM_CREDENTIALS = 1, 2
EPOLL_EVENT_SIZE = 12           # struct epoll_event is packed on x86: u32 events, u64 data
MAX_CMSGS = 32
NUL = b"\0"


def _named(value: int, table: dict) -> str:
    return table.get(value, str(value))


def socket_type(value: int) -> str:
    """`SOCK_STREAM|SOCK_CLOEXEC`: the type by name, then its flags."""
    kind = value & 0xf
    text = xlat_style.named(kind, SOCK_TYPES.get(kind, f"{kind:#x} /* SOCK_??? */"))
    rest = xlat_style.flag_set(value & ~0xf, SOCK_FLAGS, zero="") if value & ~0xf else ""
    return text + (f"|{rest}" if rest else "")         # -X raw: 0x1|0x80000, as strace


def protocol(call, value: int) -> str:
    """IPPROTO_* for the inet families (socket's first argument), the number otherwise."""
    return IPPROTO.get(value, str(value)) if call.arg(0) in (AF_INET, AF_INET6) else str(value)


def option_name(level: int, value: int) -> str:
    table = {SOL_SOCKET: SOCKET_OPTIONS, SOL_TCP: TCP_OPTIONS}.get(level, {})
    return xlat_style.named(value, table[value]) if value in table else str(value)


def format_sockaddr(mem, addr: int, length: int) -> str:
    """A socket address of `length` bytes, by its family; NULL, or the address if unreadable."""
    if not addr:
        return "NULL"
    if length < 2:
        return format_address(addr)
    data = mem.read(addr, min(length, 128))
    if data is None:
        return format_address(addr)
    family = int.from_bytes(data[:2], "little")
    head = f"sa_family={xlat_style.named(family, FAMILIES.get(family, str(family)))}"
    body = _SOCKADDR_BODIES.get(family, lambda raw: "")(data)
    return "{" + head + (f", {body}" if body else "") + "}"


def _unix_body(data: bytes) -> str:
    path = data[2:]
    if not path:
        return ""
    if path[:1] == b"\0":
        return f'sun_path=@"{escape_bytes(path[1:])}"'
    return f'sun_path="{escape_bytes(path.split(NUL, 1)[0])}"'


def _inet_body(data: bytes) -> str:
    if len(data) < 8:
        return ""
    port = int.from_bytes(data[2:4], "big")
    return f'sin_port=htons({port}), sin_addr=inet_addr("{ipaddress.IPv4Address(data[4:8])}")'


def _inet6_body(data: bytes) -> str:
    if len(data) < 24:
        return ""
    port, flowinfo = int.from_bytes(data[2:4], "big"), int.from_bytes(data[4:8], "big")
    text = (f"sin6_port=htons({port}), sin6_flowinfo=htonl({flowinfo}), "
            f'inet_pton(AF_INET6, "{ipaddress.IPv6Address(data[8:24])}", &sin6_addr)')
    if len(data) >= 28:
        text += f", sin6_scope_id={int.from_bytes(data[24:28], 'little')}"
    return text


_SOCKADDR_BODIES = {AF_UNIX: _unix_body, AF_INET: _inet_body, AF_INET6: _inet6_body}


def length_in_out(mem, addr: int, before: int | None) -> str:
    """A value-result length: `[16]`, or `[110 => 14]` when the call changed it."""
    after = read_word(mem, addr, 4) if addr else None
    if after is None:
        return format_address(addr)
    if before is None or before == after:
        return f"[{after}]"
    return f"[{before} => {after}]"


def returned_sockaddr(call, addr_index: int, length_index: int) -> str:
    """accept's, getsockname's, recvfrom's address: as long as the kernel said it is, but no
    longer than the room the caller gave."""
    addr = call.arg(addr_index)
    if call.failed or not addr:
        return format_address(addr) if addr else "NULL"
    length = read_word(call.mem, call.arg(length_index), 4) if call.arg(length_index) else None
    before = getattr(call.mem, "entry_length", None)
    if length is None:
        return format_address(addr)
    return format_sockaddr(call.mem, addr, min(length, before) if before is not None else length)


def option_value(call, addr: int, length: int) -> str:
    """An option's value: `[1]` for an int, the bytes otherwise."""
    if not addr:
        return "NULL"
    if length == 4:
        value = read_word(call.mem, addr, 4, signed=True)
        return format_address(addr) if value is None else f"[{value}]"
    return format_buffer(call.mem, addr, length)


def format_epoll_event(mem, addr: int) -> str:
    data = mem.read(addr, EPOLL_EVENT_SIZE) if addr else None
    if data is None or len(data) < EPOLL_EVENT_SIZE:
        return format_address(addr) if addr else "NULL"
    return _event_text(data)


def _event_text(data: bytes) -> str:
    events = int.from_bytes(data[:4], "little")
    value = int.from_bytes(data[4:12], "little")
    return (f"{{events={xlat_style.flag_set(events, tuple(EPOLL_EVENTS.items()))}, "
            f"data={{u32={value & 0xffffffff}, u64={value}}}}}")


def format_epoll_events(mem, addr: int, count: int) -> str:
    if count <= 0:
        return "[]" if count == 0 else format_address(addr)
    data = mem.read(addr, count * EPOLL_EVENT_SIZE)
    if data is None:
        return format_address(addr)
    return "[" + ", ".join(_event_text(data[i:i + EPOLL_EVENT_SIZE])
                           for i in range(0, len(data), EPOLL_EVENT_SIZE)) + "]"


def format_msghdr(call, addr: int, data_size: int | None) -> str:
    """struct user_msghdr: name, iovec (each buffer whole for sendmsg, `data_size` bytes in
    all for recvmsg), control messages, flags."""
    word = call.word
    fields = read_words(call.mem, addr, word, 7) if addr else None
    if fields is None:
        return format_address(addr)
    # (pointers and lengths are longs; namelen and msg_flags are ints, padded to a long)
    name, namelen, iov, iovlen, control, controllen, msg_flags = fields
    namelen &= 0xffffffff
    msg_flags &= 0xffffffff
    parts = [f"msg_name={format_sockaddr(call.mem, name, namelen)}", f"msg_namelen={namelen}",
             f"msg_iov={structs.format_iovec(call.mem, iov, iovlen, word, data_size)}",
             f"msg_iovlen={iovlen}"]
    if controllen:
        parts.append(f"msg_control={_control_messages(call, control, controllen)}")
    parts += [f"msg_controllen={controllen}",
              f"msg_flags={xlat_style.flag_set(msg_flags, tuple(MSG_FLAGS.items()))}"]
    return "{" + ", ".join(parts) + "}"


def _control_messages(call, addr: int, size: int) -> str:
    data = call.mem.read(addr, size)
    if data is None:
        return format_address(addr)
    word, items, offset = call.word, [], 0
    header = word + 8
    while offset + header <= len(data) and len(items) < MAX_CMSGS:
        length = int.from_bytes(data[offset:offset + word], "little")
        level = int.from_bytes(data[offset + word:offset + word + 4], "little")
        kind = int.from_bytes(data[offset + word + 4:offset + header], "little")
        if length < header:
            break
        payload = data[offset + header:offset + length]
        items.append(f"{{cmsg_len={length}, cmsg_level={xlat_style.named(level, _named(level, LEVELS))}, "
                     f"cmsg_type={_cmsg_type(level, kind)}, cmsg_data={_cmsg_data(level, kind, payload)}}}")
        offset += (length + word - 1) // word * word
    return "[" + ", ".join(items) + "]"


def _cmsg_type(level: int, kind: int) -> str:
    if level == SOL_SOCKET:
        names = {SCM_RIGHTS: "SCM_RIGHTS", SCM_CREDENTIALS: "SCM_CREDENTIALS"}
        return xlat_style.named(kind, names[kind]) if kind in names else str(kind)
    return str(kind)


def _cmsg_data(level: int, kind: int, payload: bytes) -> str:
    if level == SOL_SOCKET and kind == SCM_RIGHTS:
        fds = [int.from_bytes(payload[i:i + 4], "little", signed=True)
               for i in range(0, len(payload) - 3, 4)]
        return "[" + ", ".join(map(str, fds)) + "]"
    if level == SOL_SOCKET and kind == SCM_CREDENTIALS and len(payload) >= 12:
        pid, uid, gid = (int.from_bytes(payload[i:i + 4], "little") for i in (0, 4, 8))
        return f"{{pid={pid}, uid={uid}, gid={gid}}}"
    return '"' + escape_bytes(payload) + '"'


# Calls whose length argument is value-result: strace reads it at the entry too (the client
# keeps it for the exit's `[110 => 14]`), by argument index.
LENGTH_ARGUMENTS = {"accept": 2, "accept4": 2, "getsockname": 2, "getpeername": 2,
                    "recvfrom": 5, "getsockopt": 4}


def _table(table):
    bits = tuple(table.items()) if isinstance(table, dict) else table
    return lambda call, index, value: xlat_style.flag_set(value, bits)


def _enum(table: dict):
    return lambda call, index, value: xlat_style.named(value, _named(value, table))


def _length(call, index, value) -> str:
    return length_in_out(call.mem, value, getattr(call.mem, "entry_length", None))


def _returned_address(call, index, value) -> str:
    return returned_sockaddr(call, index, index + 1)


def _given_address(call, index, value) -> str:
    return format_sockaddr(call.mem, value, call.arg(index + 1) & 0xffffffff)


def _received(call, index, value) -> str:
    """recvfrom's buffer: what was received, but no more than the buffer holds (MSG_TRUNC
    returns the datagram's whole length)."""
    if call.failed or not value:
        return format_address(value) if value else "NULL"
    return format_buffer(call.mem, value, min(call.ret, call.arg(index + 1)))


def _got_option(call, index, value) -> str:
    if call.failed or not value:
        return format_address(value) if value else "NULL"
    length = read_word(call.mem, call.arg(index + 1), 4) if call.arg(index + 1) else None
    return format_address(value) if length is None else option_value(call, value, length)


def _domain_calls() -> dict:
    decoders = {}
    for name in ("socket", "socketpair"):
        decoders[(name, 0)] = _enum(FAMILIES)
        decoders[(name, 1)] = lambda call, index, value: socket_type(value)
        decoders[(name, 2)] = lambda call, index, value: protocol(call, value)
    return decoders


def _address_calls() -> dict:
    decoders = {("bind", 1): _given_address, ("connect", 1): _given_address,
                ("sendto", 4): _given_address}
    for name in ("accept", "accept4", "getsockname", "getpeername"):
        decoders[(name, 1)] = _returned_address
        decoders[(name, 2)] = _length
    decoders[("accept4", 3)] = _table(SOCK_FLAGS)
    decoders[("recvfrom", 4)] = _returned_address
    decoders[("recvfrom", 5)] = _length
    return decoders


OVERRIDES = {
    **_domain_calls(), **_address_calls(),
    ("setsockopt", 1): _enum(LEVELS), ("getsockopt", 1): _enum(LEVELS),
    ("setsockopt", 2): lambda call, index, value: option_name(call.arg(1), value),
    ("getsockopt", 2): lambda call, index, value: option_name(call.arg(1), value),
    ("setsockopt", 3): lambda call, index, value: option_value(call, value, call.arg(4)),
    ("getsockopt", 3): _got_option, ("getsockopt", 4): _length,
    ("sendto", 3): _table(MSG_FLAGS), ("recvfrom", 3): _table(MSG_FLAGS),
    ("recvfrom", 1): _received,
    ("sendmsg", 1): lambda call, index, value: format_msghdr(call, value, None),
    ("recvmsg", 1): lambda call, index, value: (format_address(value) if call.failed
                                                else format_msghdr(call, value, call.ret)),
    ("sendmsg", 2): _table(MSG_FLAGS), ("recvmsg", 2): _table(MSG_FLAGS),
    ("shutdown", 1): _enum(SHUT_HOW),
    ("epoll_create1", 0): _table(EPOLL_CREATE_FLAGS),
    ("epoll_ctl", 1): _enum(EPOLL_OPS),
    ("epoll_ctl", 3): lambda call, index, value: format_epoll_event(call.mem, value),
    ("eventfd2", 1): _table(EFD_FLAGS),
}
# The arguments the kernel fills in: a call split by -f's <unfinished ...> shows them resumed.
OUTPUTS = frozenset({("accept", 1), ("accept4", 1), ("getsockname", 1), ("getpeername", 1),
                     ("recvmsg", 1), ("getsockopt", 3), ("epoll_wait", 1), ("epoll_pwait", 1),
                     ("epoll_pwait2", 1)})
for _wait in ("epoll_wait", "epoll_pwait", "epoll_pwait2"):
    OVERRIDES[(_wait, 1)] = lambda call, index, value: (
        format_address(value) if call.failed else format_epoll_events(call.mem, value, call.ret))


# i386's socketcall(call, args): strace shows the call it multiplexes, with the arguments
# read from the array (include/uapi/linux/net.h SYS_*, net/socket.c nargs[]).
SOCKETCALLS = {1: ("socket", 3), 2: ("bind", 3), 3: ("connect", 3), 4: ("listen", 2),
               5: ("accept", 3), 6: ("getsockname", 3), 7: ("getpeername", 3),
               8: ("socketpair", 4), 9: ("send", 4), 10: ("recv", 4), 11: ("sendto", 6),
               12: ("recvfrom", 6), 13: ("shutdown", 2), 14: ("setsockopt", 5),
               15: ("getsockopt", 5), 16: ("sendmsg", 3), 17: ("recvmsg", 3), 18: ("accept4", 4),
               19: ("recvmmsg", 5), 20: ("sendmmsg", 4)}


def demultiplexed(name: str, args, mem, bits: int):
    """(name, args) of the call a socketcall stands for; the socketcall itself when its
    number is unknown or its array cannot be read."""
    if name != "socketcall" or bits != 32 or len(args) < 2:
        return name, args
    target = SOCKETCALLS.get(args[0] & 0xffffffff)
    if target is None:
        return name, args
    values = read_words(mem, args[1], 4, target[1]) if args[1] else None
    return (name, args) if values is None else (target[0], tuple(values))
