"""What a process's descriptor is beyond its /proc/PID/fd link, as a tool on Linux learns it
(and its working directory, /proc/PID/cwd):
a device's number from fstat's st_rdev, a socket's protocol and addresses from the kernel's
sock_diag (NETLINK_SOCK_DIAG: unix_diag, inet_diag), which strace -yy asks. Part of the
debug interface (kernel_model/debug/), one of its parts.

The kernel's socket protocol names are its `struct proto` names (net/unix/af_unix.c:
unix_stream_proto "UNIX-STREAM", unix_dgram_proto "UNIX" for datagram and seqpacket sockets;
net/ipv4 "TCP", "UDP"; net/ipv6 "TCPv6", "UDPv6"), what getxattr("system.sockprotoname")
gives strace.
"""
from dataclasses import dataclass

from ..fs.constants import S_IFMT
from ..fsview import fs_view
from ..net.constants import AF_INET6, SOCK_DGRAM, SOCK_STREAM
from ..net.inet import InetSocket
from ..net.unix import UnixSocket

S_IFCHR, S_IFBLK = 0o020000, 0o060000


@dataclass(frozen=True)
class DeviceNumber:
    kind: str                   # "char" or "block"
    major: int
    minor: int


@dataclass(frozen=True)
class SocketEnds:
    protocol: str               # "UNIX-STREAM", "UNIX", "TCP", "TCPv6", "UDP", "UDPv6"
    inode: int
    # inet: (host bytes in network order, port) of each end; None: no such end (not bound,
    # not connected), as inet_diag has no entry for an unbound socket
    local: tuple[bytes, int] | None = None
    remote: tuple[bytes, int] | None = None
    # unix: the connected peer's inode and the bound name (b"\0..." abstract), if any
    peer_inode: int | None = None
    path: bytes | None = None


class DescriptorAccess:
    @staticmethod
    def cwd_path(process) -> bytes:
        """What readlink("/proc/PID/cwd") shows the process (strace -y's `AT_FDCWD</tmp>`),
        seen from its root."""
        return fs_view(process).cwd()

    @staticmethod
    def fd_device(process, fd: int) -> DeviceNumber | None:
        """The character or block device `fd` is open on (its st_rdev, new_decode_dev's split),
        None for any other file."""
        file = _open_file(process, fd)
        if file is None or isinstance(file, UnixSocket) or not hasattr(file, "stat"):
            return None
        stat = file.stat()
        kind = {S_IFCHR: "char", S_IFBLK: "block"}.get(stat.mode & S_IFMT)
        if kind is None:
            return None
        major = ((stat.rdev >> 8) & 0xfff) | ((stat.rdev >> 32) & ~0xfff)
        minor = (stat.rdev & 0xff) | ((stat.rdev >> 12) & ~0xff)
        return DeviceNumber(kind, major, minor)

    @staticmethod
    def fd_socket(process, fd: int) -> SocketEnds | None:
        """The socket `fd` is, with what sock_diag would say of its ends; None if not one."""
        sock = _open_file(process, fd)
        if isinstance(sock, InetSocket):
            return _inet_ends(sock)
        if isinstance(sock, UnixSocket):
            protocol = "UNIX-STREAM" if sock.type == SOCK_STREAM else "UNIX"
            peer = sock.peer.ino if sock.peer is not None and not sock.peer.closed else None
            return SocketEnds(protocol, sock.ino, peer_inode=peer,
                              path=sock.name.raw if sock.name is not None else None)
        return None


def _open_file(process, fd: int):
    entries = getattr(process.fds, "entries", None) if process.fds is not None else None
    entry = entries.get(fd) if entries is not None else None
    return entry.file if entry is not None else None


def _inet_ends(sock: InetSocket) -> SocketEnds:
    protocol = "UDP" if sock.type == SOCK_DGRAM else "TCP"
    if sock.family == AF_INET6:
        protocol += "v6"
    local = (sock.name.host, sock.name.port) if sock.name is not None else None
    remote = None
    if sock.peer_name is not None:
        remote = (sock.peer_name.host, sock.peer_name.port)
    elif sock.peer is not None and sock.peer.name is not None:
        remote = (sock.peer.name.host, sock.peer.name.port)
    if local is not None and remote is not None and sock.name.is_any:
        # (an accepted socket shares its listener's name, 0.0.0.0 perhaps; its own end is the
        # address the client reached: the loopback host of the other end)
        local = (remote[0], local[1])
    return SocketEnds(protocol, sock.ino, local=local, remote=remote)
