"""Socket options at SOL_SOCKET (net/core/sock.c: sk_setsockopt, sk_getsockopt) that an AF_UNIX
socket keeps. Integer options are stored as set; SO_SNDBUF/SO_RCVBUF are doubled and floored
as Linux does ("to allow room for bookkeeping overhead", socket(7)); SO_RCVTIMEO/SO_SNDTIMEO
are kept as the struct timeval given and bound the socket calls' sleeps (socket_args.py);
SO_LINGER is kept and read back."""
import struct
from dataclasses import dataclass, field

from .. import errno as E
from ..errno import GuestErrno
from .constants import (SO_BROADCAST, SO_DEBUG, SO_DONTROUTE, SO_KEEPALIVE, SO_LINGER,
                        SO_NO_CHECK, SO_OOBINLINE, SO_PASSCRED, SO_PRIORITY, SO_RCVBUF, SO_RCVBUFFORCE,
                        SO_RCVLOWAT, SO_RCVTIMEO, SO_REUSEADDR, SO_REUSEPORT, SO_SNDBUF,
                        SO_SNDBUFFORCE, SO_SNDLOWAT, SO_SNDTIMEO, SOCK_MIN_RCVBUF,
                        SOCK_MIN_SNDBUF, SYSCTL_WMEM_MAX, WMEM_DEFAULT)

# (SO_NO_CHECK: sk_no_check_tx, UDP's "no checksum"; the loopback network sums nothing)
FLAG_OPTIONS = (SO_DEBUG, SO_REUSEADDR, SO_DONTROUTE, SO_BROADCAST, SO_KEEPALIVE, SO_OOBINLINE,
                SO_REUSEPORT, SO_PASSCRED, SO_NO_CHECK)
INT_OPTIONS = (SO_PRIORITY, SO_SNDLOWAT)
TIMEVAL_OPTIONS = (SO_RCVTIMEO, SO_SNDTIMEO)
ZERO_TIMEVAL = {4: bytes(8), 8: bytes(16)}      # struct timeval in the ABI's longs


@dataclass
class SocketOptions:
    sndbuf: int = WMEM_DEFAULT
    rcvbuf: int = WMEM_DEFAULT
    rcvlowat: int = 1
    flags: dict = field(default_factory=dict)        # SO_REUSEADDR... -> 0/1
    ints: dict = field(default_factory=dict)         # SO_PRIORITY...
    raw: dict = field(default_factory=dict)          # SO_LINGER, SO_*TIMEO: the bytes given

    @property
    def passcred(self) -> bool:
        return bool(self.flags.get(SO_PASSCRED))

    def set(self, name: int, value: bytes) -> None:
        """setsockopt(SOL_SOCKET, name): EINVAL for a value shorter than an int (sk_setsockopt
        reads one for every option), ENOPROTOOPT for an option it does not know."""
        if name in TIMEVAL_OPTIONS or name == SO_LINGER:
            self.raw[name] = value
            return
        if len(value) < 4:
            raise GuestErrno(E.EINVAL)
        number = struct.unpack_from("<i", value)[0]
        if name in FLAG_OPTIONS:
            self.flags[name] = int(number != 0)
        elif name in INT_OPTIONS:
            self.ints[name] = number
        elif name in (SO_SNDBUF, SO_SNDBUFFORCE):
            self.sndbuf = max(_buffer_size(number, forced=name == SO_SNDBUFFORCE) * 2,
                              SOCK_MIN_SNDBUF)
        elif name in (SO_RCVBUF, SO_RCVBUFFORCE):
            self.rcvbuf = max(_buffer_size(number, forced=name == SO_RCVBUFFORCE) * 2,
                              SOCK_MIN_RCVBUF)
        elif name == SO_RCVLOWAT:
            self.rcvlowat = max(number, 1) if number >= 0 else 0x7FFFFFFF
        else:
            raise GuestErrno(E.ENOPROTOOPT)

    def timeout_ns(self, name: int, word: int) -> int | None:
        """SO_RCVTIMEO/SO_SNDTIMEO as nanoseconds; None for none (zero, the default)."""
        raw = self.raw.get(name)
        if raw is None:
            return None
        fmt = "<ii" if word == 4 else "<qq"
        if len(raw) < struct.calcsize(fmt):
            return None
        sec, usec = struct.unpack_from(fmt, raw)
        total = sec * 10**9 + usec * 1000
        return total if total > 0 else None

    def get(self, name: int, word: int) -> bytes | None:
        """The value of an option kept here, or None when the socket answers it itself."""
        if name in FLAG_OPTIONS:
            return struct.pack("<i", self.flags.get(name, 0))
        if name in INT_OPTIONS:
            return struct.pack("<i", self.ints.get(name, 1 if name == SO_SNDLOWAT else 0))
        if name == SO_SNDBUF:
            return struct.pack("<i", self.sndbuf)
        if name == SO_RCVBUF:
            return struct.pack("<i", self.rcvbuf)
        if name == SO_RCVLOWAT:
            return struct.pack("<i", self.rcvlowat)
        if name == SO_LINGER:
            return self.raw.get(name, bytes(8))
        if name in TIMEVAL_OPTIONS:
            return self.raw.get(name, ZERO_TIMEVAL[word])
        return None


def _buffer_size(number: int, *, forced: bool) -> int:
    """sk_setsockopt: SO_SNDBUF/SO_RCVBUF take the value as unsigned, capped at
    net.core.wmem_max/rmem_max; the *FORCE forms (root) take a negative one as 0 and no cap
    but INT_MAX / 2, so that doubling stays an int."""
    if forced:
        number = max(number, 0)
    else:
        number = min(number & 0xFFFFFFFF, SYSCTL_WMEM_MAX)
    return min(number, 0x7FFFFFFF // 2)
