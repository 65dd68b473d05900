"""struct sockaddr_un (include/uapi/linux/un.h): sa_family_t sun_family; char sun_path[108].

A name is one of three kinds (unix(7), "Address format"):
  pathname  sun_path is a NUL-terminated path: the socket is an inode of the file system;
  abstract  sun_path[0] is NUL: the name is every byte up to addrlen, outside any file system;
  unnamed   no name (a socketpair's sockets, a socket never bound): addrlen is 2.
"""
import struct
from dataclasses import dataclass

from .. import errno as E
from ..errno import GuestErrno
from .constants import AF_UNIX

SUN_PATH_OFFSET = 2                 # offsetof(struct sockaddr_un, sun_path)
SOCKADDR_UN_SIZE = 110              # sizeof(struct sockaddr_un)


@dataclass(frozen=True)
class UnixName:
    raw: bytes                      # sun_path's meaningful bytes: the path, or NUL + the name

    @property
    def abstract(self) -> bool:
        return self.raw[:1] == b"\0"

    @property
    def path(self) -> bytes:
        return self.raw

    def sockaddr(self) -> bytes:
        """The address getsockname/accept/recvfrom give back (unix_getname): a path keeps its
        terminating NUL in the length, an abstract name is exactly its bytes."""
        tail = self.raw if self.abstract else self.raw + b"\0"
        return struct.pack("<H", AF_UNIX) + tail


UNNAMED_SOCKADDR = struct.pack("<H", AF_UNIX)


def sockaddr_of(name: "UnixName | None") -> bytes:
    return UNNAMED_SOCKADDR if name is None else name.sockaddr()


def is_autobind_request(raw: bytes) -> bool:
    """bind() with addrlen == sizeof(sa_family_t): unix_bind() picks an abstract name itself."""
    return len(raw) == SUN_PATH_OFFSET and struct.unpack("<H", raw)[0] == AF_UNIX


def parse(raw: bytes) -> UnixName:
    """unix_validate_addr() then unix_mkname_bsd(): EINVAL for a length outside
    (sun_path's offset, sizeof(struct sockaddr_un)] or another family; a pathname ends at its
    first NUL (or at addrlen when it has none)."""
    if len(raw) <= SUN_PATH_OFFSET or len(raw) > SOCKADDR_UN_SIZE:
        raise GuestErrno(E.EINVAL)
    if struct.unpack_from("<H", raw)[0] != AF_UNIX:
        raise GuestErrno(E.EINVAL)
    path = raw[SUN_PATH_OFFSET:]
    if path[:1] == b"\0":
        return UnixName(path)
    return UnixName(path.split(b"\0", 1)[0])


def autobind_name(counter: int) -> UnixName:
    """unix_autobind(): NUL and five hex digits. Linux starts from a random number; the
    sandbox counts from 0 so that runs are the same."""
    return UnixName(b"\0" + b"%05x" % (counter & 0xFFFFF))
