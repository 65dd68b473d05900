"""Network namespaces (net/core/net_namespace.c): each is a loopback network of its own.

A socket lives in its creator's namespace (sock_net): its ports (inet_ports.py), its netlink
port ids and lo's state (netlink_ports.py: up or down), its abstract AF_UNIX names
(names.py) are that namespace's, so two namespaces may bind the same port or name and never
reach each other; a pathname socket is a file, found through the file system from any
namespace (unix_find_bsd), so the socket inodes are shared. lo's MTU is kept with its state,
and the namespace keeps the ipv4 conf sysctls programs read (/proc/sys/net/ipv4/conf/{all,default,lo}/tag: 0 in a new
namespace, whatever the others say). The namespace is owned by the user namespace of its
creator's credentials, over which CAP_NET_ADMIN and CAP_NET_RAW are asked.

The initial namespace is the kernel's own tables (a socket whose `net` is None uses them);
clone and unshare(CLONE_NEWNET) make others (CAP_SYS_ADMIN in the caller's user namespace).
"""
from .inet_ports import InetPorts
from .names import UnixNames
from .netlink_ports import NetlinkPorts

INITIAL_NET_INUM = 0xEFFFFFF9        # the number a booted host shows (fs/nsfs.py KINDS)
CONF_SCOPES = (b"all", b"default", b"lo")


class NetNamespace:
    def __init__(self, inum: int, user_ns, inet_ports=None, netlink_ports=None, unix_names=None,
                 unix_inodes=None):
        self.inum = inum
        self.user_ns = user_ns
        self.inet_ports = inet_ports if inet_ports is not None else InetPorts()
        if netlink_ports is None:
            netlink_ports = NetlinkPorts()
            netlink_ports.loopback_up = False    # a new namespace's lo is down until set up
        self.netlink_ports = netlink_ports
        if unix_names is None:
            unix_names = UnixNames()
            unix_names.inodes = unix_inodes      # pathname sockets: one file system for all
        self.unix_names = unix_names
        self.conf_tag = dict.fromkeys(CONF_SCOPES, 0)


def initial(kernel, user_ns) -> NetNamespace:
    """The machine's network: the kernel's tables."""
    return NetNamespace(INITIAL_NET_INUM, user_ns, kernel.inet_ports, kernel.netlink_ports,
                        kernel.unix_names)


def new(kernel, user_ns) -> NetNamespace:
    """copy_net_ns: a network with lo alone, owned by `user_ns`; its ipv4 conf's all and
    default copied from the initial namespace's and lo's from its default
    (devconf_inherit_init_net 0: IPv4 inherits)."""
    net = NetNamespace(next(kernel.ns_inums), user_ns, unix_inodes=kernel.unix_names.inodes)
    first = kernel.initial_net.conf_tag
    net.conf_tag = {b"all": first[b"all"], b"default": first[b"default"], b"lo": first[b"default"]}
    return net


def lo_is_up(sock) -> bool:
    """Whether the socket's lo is up (a route to the loopback addresses exists). The kernel's
    netlink table is made on first use (lazy_tables.py): until then nobody took lo down."""
    tables = sock.net if sock.net is not None else sock.kernel
    ports = vars(tables).get("netlink_ports")
    return ports is None or ports.loopback_up
