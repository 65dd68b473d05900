"""Moving data through sockets: sendto, recvfrom, sendmsg, recvmsg, with struct msghdr, its
iovec and its control messages (SCM_RIGHTS: open files; SCM_CREDENTIALS: struct ucred),
following net/socket.c (____sys_sendmsg, ____sys_recvmsg) and net/core/scm.c.

A receive that would sleep is executed again from scratch, so everything that can fail
(buffers, the address and its length) is checked before the socket gives anything up.
"""
import struct
from dataclasses import dataclass

from ... import errno as E
from ...errno import GuestErrno
from ...memory.vm import PROT_WRITE
from ...net.ucred_view import as_seen_by, from_sender
from ...net.address import parse
from ...net.constants import (MSG_CMSG_CLOEXEC, MSG_CTRUNC, MSG_TRUNC, SCM_CREDENTIALS,
                              SCM_MAX_FD, SCM_RIGHTS, SO_RCVTIMEO, SO_SNDTIMEO, SOCK_STREAM,
                              SOL_SOCKET)
from ...net.inet import InetSocket
from ...net.netlink import NetlinkSocket
from ...net.packet import PacketSocket
from ...net.message import Credentials
from ...fdtable import release_file
from ...iovec import MAX_RW_COUNT, UIO_MAXIOV, gather, import_iovec
from ...landlock.hooks import check_abstract_peer
from ..kinds import K
from ..registry import syscall
from .socket_args import (caller_creds, check_sockaddr_out, find_raw, read_sockaddr, sock_of,
                          timed, write_sockaddr)

UCRED = struct.Struct("<iII")


@dataclass
class MsgHdr:
    """struct msghdr / struct compat_msghdr (i386): the fields in guest memory."""
    name: int
    namelen: int
    iov: int
    iovlen: int
    control: int
    controllen: int
    flags: int

    @staticmethod
    def layout(word: int) -> struct.Struct:
        return struct.Struct("<IiIIIIi" if word == 4 else "<QixxxxQQQQixxxx")

    @classmethod
    def read(cls, ctx, addr: int) -> "MsgHdr":
        fmt = cls.layout(ctx.word)
        return cls(*fmt.unpack(ctx.read(addr, fmt.size)))


def _check_iovlen(header: MsgHdr) -> None:
    """copy_msghdr_from_user: more than UIO_MAXIOV entries is EMSGSIZE (not readv's EINVAL)."""
    if header.iovlen > UIO_MAXIOV:
        raise GuestErrno(E.EMSGSIZE)


def _cmsg_header(word: int) -> struct.Struct:
    """struct cmsghdr: size_t cmsg_len; int cmsg_level; int cmsg_type (then data aligned)."""
    return struct.Struct("<Iii" if word == 4 else "<Qii")


def _align(ctx, n: int) -> int:
    return -(-n // ctx.word) * ctx.word          # CMSG_ALIGN: to sizeof(long)


# ---- sending --------------------------------------------------------------------------------
@syscall("sendto", args=(("sockfd", K.FD), ("buf", K.BUF_IN), ("len", K.ULONG), ("flags", K.HEX),
                         ("dest_addr", K.STRUCT), ("addrlen", K.UINT)))
def sys_sendto(ctx, fd, buf, length, flags, dest, addrlen):
    sock = sock_of(ctx, fd)
    data = ctx.read(buf, min(length, MAX_RW_COUNT))
    return _send(ctx, sock, data, flags & 0xFFFFFFFF, dest, addrlen, [], caller_creds(ctx))


@syscall("sendmsg", args=(("sockfd", K.FD), ("msg", K.STRUCT), ("flags", K.HEX)))
def sys_sendmsg(ctx, fd, msg, flags):
    return send_msghdr(ctx, sock_of(ctx, fd), msg, flags)


def send_msghdr(ctx, sock, msg: int, flags: int) -> int:
    """____sys_sendmsg: one struct msghdr at `msg` through `sock`."""
    header = MsgHdr.read(ctx, msg)
    _check_iovlen(header)
    files, creds = _control_in(ctx, header)
    try:
        data, faulted = gather(ctx, import_iovec(ctx, header.iov, header.iovlen))
        if faulted:
            raise GuestErrno(E.EFAULT)
        return _send(ctx, sock, data, flags & 0xFFFFFFFF, header.name, header.namelen,
                     files, creds)
    finally:
        for f in files:                  # the message holds its own references
            release_file(f)


def _send(ctx, sock, data: bytes, flags: int, dest: int, addrlen: int, files, creds) -> int:
    target, named = None, bool(dest and addrlen)
    if isinstance(sock, (InetSocket, NetlinkSocket, PacketSocket)):  # their own addresses
        raw = read_sockaddr(ctx, dest, addrlen) if named else None
        send = lambda: sock.send(data, flags, creds, files=files, raw=raw)   # noqa: E731
    else:
        if named and sock.type != SOCK_STREAM:
            raw = read_sockaddr(ctx, dest, addrlen)
            target = find_raw(ctx, raw)
            if target is not sock.peer:     # hook_unix_may_send: a connected peer passed
                check_abstract_peer(ctx.thread, parse(raw).abstract,
                                    getattr(target, "landlock_domain", None))
        send = lambda: sock.send(data, flags, creds, files=files,            # noqa: E731
                                 target=target, named=named)
    return timed(ctx, sock, ("send", id(sock)), SO_SNDTIMEO, send)


def _control_in(ctx, header: MsgHdr) -> tuple[list, Credentials]:
    """__scm_send(): SCM_RIGHTS files (EBADF for a closed fd, EINVAL for none or more than
    SCM_MAX_FD) and SCM_CREDENTIALS (root may claim any); other levels are skipped."""
    files, creds = [], caller_creds(ctx)
    if not header.control or header.controllen < _cmsg_header(ctx.word).size:
        return files, creds
    raw = ctx.read(header.control, header.controllen)
    hdr = _cmsg_header(ctx.word)
    at = 0
    try:
        while at + hdr.size <= len(raw):
            length, level, kind = hdr.unpack_from(raw, at)
            if length < hdr.size or at + length > len(raw):
                raise GuestErrno(E.EINVAL)
            payload = raw[at + hdr.size:at + length]
            if level == SOL_SOCKET:
                creds = _one_control(ctx, kind, payload, files, creds)
            at += _align(ctx, length)
    except GuestErrno:
        for f in files:
            release_file(f)
        raise
    return files, creds


def _one_control(ctx, kind: int, payload: bytes, files: list, creds: Credentials) -> Credentials:
    from ...fdtable import retain_file
    if kind == SCM_RIGHTS:
        count = len(payload) // 4
        if count == 0 or count + len(files) > SCM_MAX_FD:
            raise GuestErrno(E.EINVAL)
        for (fd,) in struct.iter_unpack("<i", payload[:4 * count]):
            f = ctx.proc.fds.get(fd)
            retain_file(f)
            files.append(f)
        return creds
    if kind == SCM_CREDENTIALS:
        if len(payload) != UCRED.size:
            raise GuestErrno(E.EINVAL)
        return from_sender(ctx.proc, Credentials(*UCRED.unpack(payload)))   # its namespaces' ids
    raise GuestErrno(E.EINVAL)


# ---- receiving ------------------------------------------------------------------------------
@syscall("recvfrom", args=(("sockfd", K.FD), ("buf", K.BUF_OUT), ("len", K.ULONG),
                           ("flags", K.HEX), ("src_addr", K.STRUCT), ("addrlen", K.INT_OUT)))
def sys_recvfrom(ctx, fd, buf, length, flags, src, addrlen):
    sock = sock_of(ctx, fd)
    sock.check_receivable(flags & 0xFFFFFFFF)
    length = min(length, MAX_RW_COUNT)
    if length and not ctx.writable(buf, length):
        raise GuestErrno(E.EFAULT)
    check_sockaddr_out(ctx, src, addrlen)
    flags &= 0xFFFFFFFF
    taken = _recv(ctx, sock, length, flags)
    _discard_files(taken.files)          # recvfrom has no control buffer: passed files go
    if taken.data:
        ctx.store(buf, taken.data)
    if src:
        write_sockaddr(ctx, src, addrlen, _source(sock, taken))
    return _result(sock, taken, flags)


@syscall("recvmsg", args=(("sockfd", K.FD), ("msg", K.STRUCT), ("flags", K.HEX)))
def sys_recvmsg(ctx, fd, msg, flags):
    return receive_msghdr(ctx, sock_of(ctx, fd), msg, flags)


def receive_msghdr(ctx, sock, msg: int, flags: int) -> int:
    """____sys_recvmsg: one message into the struct msghdr at `msg`."""
    header = MsgHdr.read(ctx, msg)
    flags &= 0xFFFFFFFF
    _check_iovlen(header)
    if header.name and header.namelen < 0:
        raise GuestErrno(E.EINVAL)          # copy_msghdr_from_user, before the protocol
    sock.check_receivable(flags)
    segments = import_iovec(ctx, header.iov, header.iovlen)
    capacity = sum(length for _, length in segments)
    for base, length in segments:
        if length and ctx.accessible_prefix(base, length, PROT_WRITE) < length:
            raise GuestErrno(E.EFAULT)
    if not ctx.writable(msg, MsgHdr.layout(ctx.word).size):
        raise GuestErrno(E.EFAULT)
    taken = _recv(ctx, sock, capacity, flags)
    _scatter(ctx, segments, taken.data)
    out_flags = MSG_TRUNC if len(taken.data) < taken.length and sock.type != SOCK_STREAM else 0
    used, ctrunc = _control_out(ctx, sock, header, taken, flags)
    source = _source(sock, taken) if header.name else b""
    if source:
        ctx.write(header.name, source[:header.namelen])
    header.namelen = len(source)
    header.controllen = used
    # ____sys_recvmsg (net/socket.c): msg_flags start as the call's MSG_CMSG_CLOEXEC
    # (MSG_CMSG_COMPAT is masked off on the way out); the protocol adds the rest.
    header.flags = (flags & MSG_CMSG_CLOEXEC) | out_flags | ctrunc
    fmt = MsgHdr.layout(ctx.word)
    ctx.write(msg, fmt.pack(header.name, header.namelen, header.iov, header.iovlen,
                            header.control, header.controllen, header.flags))
    return _result(sock, taken, flags)


def _recv(ctx, sock, n: int, flags: int):
    return timed(ctx, sock, ("recv", id(sock)), SO_RCVTIMEO, lambda: sock.recv(n, flags))


def _result(sock, taken, flags: int) -> int:
    """MSG_TRUNC asks a datagram socket for the message's real length (unix_dgram_recvmsg)."""
    if flags & MSG_TRUNC and sock.type != SOCK_STREAM:
        return taken.length
    return len(taken.data)


def _source(sock, taken) -> bytes:
    return sock.source(taken)


def _scatter(ctx, segments, data: bytes) -> None:
    at = 0
    for base, length in segments:
        if at >= len(data):
            break
        chunk = data[at:at + length]
        ctx.store(base, chunk)
        at += len(chunk)


def _control_out(ctx, sock, header: MsgHdr, taken, flags: int) -> tuple[int, int]:
    """scm_recv(): SCM_CREDENTIALS when the socket asked (SO_PASSCRED), then SCM_RIGHTS with
    the files installed as new fds; what does not fit is cut (MSG_CTRUNC) and its files
    closed. Returns the control bytes used and MSG_CTRUNC or 0."""
    hdr = _cmsg_header(ctx.word)
    room = header.controllen if header.control else 0
    out, ctrunc = bytearray(), 0
    if sock.options.passcred and taken.creds is not None:
        seen = as_seen_by(ctx.proc, taken.creds)        # in the receiver's namespaces
        ctrunc |= _put_cmsg(ctx, out, room, SCM_CREDENTIALS, UCRED.pack(seen.pid, seen.uid, seen.gid))
    if taken.files:
        fit = max(0, (room - len(out) - hdr.size) // 4)
        installed = [_install(ctx, f, flags) for f in taken.files[:fit]]
        _discard_files(taken.files[fit:])
        if len(installed) < len(taken.files):
            ctrunc = MSG_CTRUNC
        if installed:
            _put_cmsg(ctx, out, room, SCM_RIGHTS, struct.pack(f"<{len(installed)}i", *installed))
    if out:
        ctx.write(header.control, bytes(out))
    return len(out), ctrunc


def _put_cmsg(ctx, out: bytearray, room: int, kind: int, payload: bytes) -> int:
    """put_cmsg(): a control message, cut to the room left (MSG_CTRUNC) and aligned."""
    hdr = _cmsg_header(ctx.word)
    length = hdr.size + len(payload)
    left = room - len(out)
    if left < hdr.size:
        return MSG_CTRUNC
    message = hdr.pack(length, SOL_SOCKET, kind) + payload
    if length > left:
        out += message[:left]
        return MSG_CTRUNC
    out += message + bytes(min(_align(ctx, length), left) - length)
    return 0


def _install(ctx, f, flags: int) -> int:
    fd = ctx.proc.fds.install(f, cloexec=bool(flags & MSG_CMSG_CLOEXEC))
    release_file(f)                      # the fd now holds what the message held
    return fd


def _discard_files(files) -> None:
    for f in files:
        release_file(f)
