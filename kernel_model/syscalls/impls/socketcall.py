"""i386's socketcall(2) multiplexer (net/socket.c, SYSCALL_DEFINE2(socketcall)): one call
number and a pointer to the real call's arguments, in longs. The call it names runs as if
called directly; send, recv and accept, which have no call of their own, are sendto,
recvfrom and accept4 with the missing arguments zero, as Linux implements them."""
import struct

from ... import errno as E
from ...errno import GuestErrno
from ..kinds import K
from ..registry import declaration, syscall

# linux/net.h SYS_* -> (the call that serves it, its argument count: nargs[] in socket.c)
SOCKETCALL = {1: ("socket", 3), 2: ("bind", 3), 3: ("connect", 3), 4: ("listen", 2),
              5: ("accept", 3), 6: ("getsockname", 3), 7: ("getpeername", 3),
              8: ("socketpair", 4), 9: ("sendto", 4), 10: ("recvfrom", 4), 11: ("sendto", 6),
              12: ("recvfrom", 6), 13: ("shutdown", 2), 14: ("setsockopt", 5),
              15: ("getsockopt", 5), 16: ("sendmsg", 3), 17: ("recvmsg", 3), 18: ("accept4", 4),
              19: ("recvmmsg", 5), 20: ("sendmmsg", 4)}


@syscall("socketcall", args=(("call", K.INT), ("args", K.STRUCT)))
def sys_socketcall(ctx, call, args):
    entry = SOCKETCALL.get(call & 0xFFFFFFFF)
    if entry is None:
        raise GuestErrno(E.EINVAL)
    name, count = entry
    words = struct.unpack(f"<{count}I", ctx.read(args, 4 * count))
    implementation = declaration(name)
    if implementation is None:
        raise GuestErrno(E.ENOSYS)
    padded = words + (0,) * (implementation.nargs - count)
    return implementation.fn(ctx, *padded[:implementation.nargs])
