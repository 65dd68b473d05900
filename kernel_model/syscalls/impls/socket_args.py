"""What the socket calls share: the socket behind an fd, socket addresses in and out of
guest memory (net/socket.c: move_addr_to_kernel, move_addr_to_user), and the lookup of a
bound name from the caller's point of view (its cwd and root)."""
import struct

from ... import errno as E
from ...blocking import WouldBlock
from ...errno import GuestErrno
from ...flags import O_PATH
from ...fsview import fs_view
from ...net.address import parse
from ...net.names import UnixNames
from ...net.unix import UnixSocket, creds_of
from ...signals.sleep_kinds import TIMED_SOCKET_WAIT
from .timedwait import TimedWait

SOCKADDR_STORAGE = 128              # sizeof(struct sockaddr_storage)


def sock_of(ctx, fd: int) -> UnixSocket:
    """sockfd_lookup(): EBADF for a closed fd or an O_PATH one (fdget does not return it),
    ENOTSOCK for a file that is not a socket."""
    f = ctx.proc.fds.get(ctx.int32(fd))
    if getattr(f, "flags", 0) & O_PATH:
        raise GuestErrno(E.EBADF)
    if not isinstance(f, UnixSocket):
        raise GuestErrno(E.ENOTSOCK)
    return f


def unix_names(ctx) -> UnixNames:
    """The caller's network namespace's names (net/namespace.py; the kernel's: the initial)."""
    return (getattr(ctx.proc, "net_ns", None) or ctx.kernel).unix_names


def net_capable(ctx, cap: int) -> bool:
    """ns_capable(net->user_ns, cap): the capability over the caller's network namespace's
    owner (the machine's for the initial one)."""
    net = getattr(ctx.proc, "net_ns", None)
    return ctx.proc.creds.capable(cap) if net is None else ctx.proc.creds.ns_capable(net.user_ns, cap)


def read_sockaddr(ctx, addr: int, addrlen: int) -> bytes:
    """move_addr_to_kernel(): a length outside [0, sizeof(sockaddr_storage)] is EINVAL."""
    length = ctx.int32(addrlen)
    if length < 0 or length > SOCKADDR_STORAGE:
        raise GuestErrno(E.EINVAL)
    return ctx.read(addr, length) if length else b""


def check_sockaddr_out(ctx, addr: int, addrlen_ptr: int) -> None:
    """Before a call consumes anything (accept, recvfrom): the length word must be readable,
    writable and not negative. The address itself is written only if there is one to give
    (TCP's recvfrom gives none, and leaves a bad address pointer alone, as Linux does)."""
    if not addr:
        return
    _user_length(ctx, addrlen_ptr)
    if not ctx.writable(addrlen_ptr, 4):
        raise GuestErrno(E.EFAULT)


def write_sockaddr(ctx, addr: int, addrlen_ptr: int, raw: bytes, *,
                   optional: bool = True) -> None:
    """move_addr_to_user(): at most the caller's length is copied, the full length stored.
    accept and recvfrom skip a NULL address (`optional`); getsockname/getpeername do not."""
    if not addr and optional:
        return
    length = _user_length(ctx, addrlen_ptr)
    if min(length, len(raw)):
        ctx.write(addr, raw[:length])
    ctx.write(addrlen_ptr, struct.pack("<i", len(raw)))


def _user_length(ctx, addrlen_ptr: int) -> int:
    length = struct.unpack("<i", ctx.read(addrlen_ptr, 4))[0]
    if length < 0:
        raise GuestErrno(E.EINVAL)
    return length


def finder(ctx):
    """name -> the socket bound to it, seen from the calling process (unix_find_other)."""
    names, fs, view = unix_names(ctx), ctx.kernel.fs, fs_view(ctx.proc)
    return lambda name: names.find(fs, name, ctx.proc.cwd, view)


def find_raw(ctx, raw: bytes) -> UnixSocket:
    return finder(ctx)(parse(raw))


def caller_creds(ctx):
    return creds_of(ctx.proc)


def timed(ctx, sock: UnixSocket, key: tuple, option: int, operation, expired_errno=E.EAGAIN):
    """Run `operation` under the socket's SO_RCVTIMEO or SO_SNDTIMEO: a sleep longer than it
    ends in `expired_errno` (EAGAIN; EINPROGRESS for connect), as sock_rcvtimeo/sock_sndtimeo
    bound Linux's waits. The deadline survives re-execution (timedwait.py). A signal ends such a
    wait with -EINTR, whatever its action (net/core/sock.c sock_intr_errno: only a wait for
    ever is -ERESTARTSYS): signals/sleep_kinds.py TIMED_SOCKET_WAIT."""
    timeout_ns = sock.options.timeout_ns(option, ctx.word)
    if timeout_ns is None:
        return operation()

    def body(wait: TimedWait):
        try:
            return operation()
        except WouldBlock as blocked:
            if wait.expired:
                raise GuestErrno(expired_errno) from None
            channels = blocked.channel if isinstance(blocked.channel, list) else [blocked.channel]
            ctx.thread.restart[TIMED_SOCKET_WAIT] = True    # a signal ends it with EINTR
            wait.sleep(channels, blocked.reason)

    return TimedWait(ctx, key, timeout_ns).run(body)
