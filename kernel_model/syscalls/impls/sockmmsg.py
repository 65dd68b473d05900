"""sendmmsg and recvmmsg (net/socket.c __sys_sendmmsg, do_recvmmsg): a vector of struct
mmsghdr { struct msghdr msg_hdr; unsigned int msg_len; }, each sent or received as by
sendmsg/recvmsg, its byte count stored in msg_len.

A call that sleeps is executed again from scratch (kernel_model/blocking.py), which would
send the first messages twice; so once one message has gone, a message that would wait ends
the call with the count so far, as Linux ends it at the first error after a success. For the
same reason recvmmsg returns what it has rather than wait for the rest of vlen (Linux waits,
unless MSG_WAITFORONE); its timeout is read and checked but not waited on.
"""
import struct

from ... import errno as E
from ...blocking import WouldBlock
from ...errno import GuestErrno
from ...iovec import UIO_MAXIOV
from ..kinds import K
from ..registry import syscall
from .sockmsg import MsgHdr, receive_msghdr, send_msghdr
from .socket_args import sock_of

MSG_WAITFORONE = 0x10000


def _entry_size(ctx) -> int:
    header = MsgHdr.layout(ctx.word).size
    return header + (4 if ctx.word == 4 else 8)          # msg_len, padded to the struct's alignment


@syscall("sendmmsg", args=(("sockfd", K.FD), ("msgvec", K.STRUCT), ("vlen", K.UINT),
                           ("flags", K.HEX)))
def sys_sendmmsg(ctx, fd, msgvec, vlen, flags):
    sock = sock_of(ctx, fd)
    return _each(ctx, msgvec, min(vlen & 0xFFFFFFFF, UIO_MAXIOV),
                 lambda at: send_msghdr(ctx, sock, at, flags & 0xFFFFFFFF))


@syscall("recvmmsg", args=(("sockfd", K.FD), ("msgvec", K.STRUCT), ("vlen", K.UINT),
                           ("flags", K.HEX), ("timeout", K.STRUCT)))
def sys_recvmmsg(ctx, fd, msgvec, vlen, flags, timeout):
    return _recvmmsg(ctx, fd, msgvec, vlen, flags, timeout, "<ii" if ctx.word == 4 else "<qq")


@syscall("recvmmsg_time64")
def sys_recvmmsg_time64(ctx, fd, msgvec, vlen, flags, timeout):
    return _recvmmsg(ctx, fd, msgvec, vlen, flags, timeout, "<qq")


def _recvmmsg(ctx, fd, msgvec, vlen, flags, timeout, fmt) -> int:
    sock = sock_of(ctx, fd)
    if timeout:
        sec, nsec = struct.unpack(fmt, ctx.read(timeout, struct.calcsize(fmt)))
        if sec < 0 or not 0 <= nsec < 10**9:
            raise GuestErrno(E.EINVAL)
    flags &= 0xFFFFFFFF
    return _each(ctx, msgvec, min(vlen & 0xFFFFFFFF, UIO_MAXIOV),
                 lambda at: receive_msghdr(ctx, sock, at, flags & ~MSG_WAITFORONE))


def _each(ctx, msgvec: int, count: int, transfer) -> int:
    size, header = _entry_size(ctx), MsgHdr.layout(ctx.word).size
    done = 0
    for i in range(count):
        at = msgvec + i * size
        try:
            moved = transfer(at)
        except (GuestErrno, WouldBlock):
            if done:
                return done
            raise
        ctx.write(at + header, struct.pack("<I", moved))
        done += 1
    return done
