"""The loopback network's port table (net/ipv4/inet_hashtables.c, udp.c, in miniature).

A socket binds (protocol, port) on the loopback host; INADDR_ANY and 127.0.0.1 both mean
it, as the sandbox has no other interface. A second bind of a port in use is EADDRINUSE
(SO_REUSEADDR lets a socket take a port whose holder does not listen, as it lets TCP reuse a
port in TIME_WAIT). Ephemeral ports are handed out in order from 32768, the start of
ip_local_port_range (Linux starts at a random offset: here runs are the same).
"""
from .. import errno as E
from ..errno import GuestErrno

EPHEMERAL_FIRST, EPHEMERAL_LAST = 32768, 60999


class InetPorts:
    def __init__(self):
        self.bound: dict[tuple[int, int], object] = {}       # (type, port) -> socket
        self._next = EPHEMERAL_FIRST
        self.raw_sockets: list = []       # raw IP sockets (raw.py), which take every port

    def bind(self, sock_type: int, port: int, sock, *, reuse: bool) -> int:
        if port == 0:
            return self._ephemeral(sock_type, sock)
        holder = self.bound.get((sock_type, port))
        if holder is not None and holder is not sock:
            if not (reuse and holder.state != "listening"):
                raise GuestErrno(E.EADDRINUSE)
        self.bound[(sock_type, port)] = sock
        return port

    def _ephemeral(self, sock_type: int, sock) -> int:
        for _ in range(EPHEMERAL_LAST - EPHEMERAL_FIRST + 1):
            port = self._next
            self._next = port + 1 if port < EPHEMERAL_LAST else EPHEMERAL_FIRST
            if (sock_type, port) not in self.bound:
                self.bound[(sock_type, port)] = sock
                return port
        raise GuestErrno(E.EADDRNOTAVAIL)

    def find(self, sock_type: int, port: int):
        return self.bound.get((sock_type, port))

    def release(self, sock_type: int, port: int, sock) -> None:
        if self.bound.get((sock_type, port)) is sock:
            del self.bound[(sock_type, port)]
