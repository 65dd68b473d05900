"""Sockets: the sandbox has no network, so no fd is ever a socket.

Calls on an fd answer ENOTSOCK (after EBADF for a bad fd), as Linux does for a non-socket;
creating a socket fails with EAFNOSUPPORT, the answer of a kernel built without networking
families. i386's socketcall(2) multiplexer is decoded so both ABIs behave the same.
"""
from ... import errno as E
from ...errno import GuestErrno
from ..kinds import K
from ..registry import syscall

FD_CALLS = ("bind", "connect", "listen", "accept", "accept4", "getsockname", "getpeername",
            "sendto", "recvfrom", "shutdown", "setsockopt", "getsockopt", "sendmsg", "recvmsg",
            "sendmmsg", "recvmmsg")
# linux/net.h SYS_* numbers of socketcall(2)
SOCKETCALL = {1: "socket", 2: "bind", 3: "connect", 4: "listen", 5: "accept", 6: "getsockname",
              7: "getpeername", 8: "socketpair", 9: "send", 10: "recv", 11: "sendto",
              12: "recvfrom", 13: "shutdown", 14: "setsockopt", 15: "getsockopt", 16: "sendmsg",
              17: "recvmsg", 18: "accept4", 19: "recvmmsg", 20: "sendmmsg"}


@syscall("socket", args=(("domain", K.INT), ("type", K.INT), ("protocol", K.INT)))
@syscall("socketpair")
def sys_socket(ctx, domain, type_, protocol):
    raise GuestErrno(E.EAFNOSUPPORT)


@syscall(*(c for c in FD_CALLS if c != "connect"))
@syscall("connect", args=(("sockfd", K.FD), ("addr", K.STRUCT), ("addrlen", K.UINT)))
def sys_socket_fd_call(ctx, fd):
    ctx.proc.fds.get(ctx.int32(fd))
    raise GuestErrno(E.ENOTSOCK)


@syscall("socketcall")
def sys_socketcall(ctx, call, args):
    name = SOCKETCALL.get(call)
    if name is None:
        raise GuestErrno(E.EINVAL)
    if name in ("socket", "socketpair"):
        raise GuestErrno(E.EAFNOSUPPORT)
    return sys_socket_fd_call(ctx, ctx.read_word(args))
