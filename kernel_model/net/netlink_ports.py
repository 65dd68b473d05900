"""The netlink port ids bound in the sandbox (net/netlink/af_netlink.c nl_table), kept by the
kernel apart from the sockets (netlink.py) so that a run that opens none imports none of them."""
from .. import errno as E
from ..errno import GuestErrno

# netlink_autobind: when the tgid is taken, Linux tries negative ids from a random point of
# [S32_MIN, -4097] downwards; the model starts at the top of that range, so runs repeat.
FIRST_ROVER = -4097


class NetlinkPorts:
    """The bound port ids, per protocol (nl_table's hash), and lo's state, which netlink
    requests and the interface ioctls (sock_ioctl.py) read and change: whether it is up
    (rtnetlink.py) and its MTU (64 KiB, loopback_setup)."""

    def __init__(self):
        self.bound: dict[tuple[int, int], "NetlinkSocket"] = {}
        self.loopback_up = True
        self.loopback_mtu = 65536

    def bind(self, sock: "NetlinkSocket", portid: int) -> None:
        if (sock.protocol, portid) in self.bound:
            raise GuestErrno(E.EADDRINUSE)
        self.bound[sock.protocol, portid] = sock
        sock.portid = portid

    def autobind(self, sock: "NetlinkSocket", tgid: int) -> None:
        portid = tgid
        rover = FIRST_ROVER
        while (sock.protocol, portid) in self.bound:
            portid, rover = rover, rover - 1
        self.bind(sock, portid)

    def release(self, sock: "NetlinkSocket") -> None:
        if self.bound.get((sock.protocol, sock.portid)) is sock:
            del self.bound[sock.protocol, sock.portid]
