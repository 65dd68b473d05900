"""Sockets (Linux net/socket.c, net/unix/af_unix.c, net/ipv4): AF_UNIX stream, datagram and
seqpacket sockets between the sandbox's processes, and AF_INET/AF_INET6 TCP and UDP on a
loopback network inside the sandbox (127.0.0.0/8, ::1); any other host is unreachable
(ENETUNREACH, with a one-line note); AF_NETLINK's NETLINK_ROUTE answers for that network's
one link, lo, and AF_PACKET sockets take their options but see no frame; other families are
refused (EAFNOSUPPORT).

constants.py          the uapi numbers (families, types, MSG_*, SOL_SOCKET options, SCM_*)
address.py            struct sockaddr_un: filesystem, abstract and unnamed names
message.py            what a send puts in a receive queue: bytes, passed files, credentials
queue.py              the receive queues: a byte stream of segments, or whole messages
names.py              the bound names: abstract ones and socket inodes of the file system
unix.py               the socket itself, an open file description (the OpenFile interface)
options.py            getsockopt/setsockopt at SOL_SOCKET
inet_address.py       struct sockaddr_in / sockaddr_in6 on the loopback network
inet_ports.py         the bound ports, ephemeral ones in order
inet.py               a TCP or UDP socket: an AF_UNIX one with what TCP/UDP change
protocol_options.py   the IPPROTO_IP/IPV6/TCP/UDP levels' options and memberships
dual_stack.py         IPv4 peers of IPv6 sockets (v4-mapped) and IPV6_ADDRFORM
netlink.py            an AF_NETLINK socket, whose other end is the kernel
netlink_ports.py      the netlink port ids, and lo's state
rtnetlink.py          NETLINK_ROUTE's answers: lo, its addresses
packet.py             an AF_PACKET socket: its options and ring geometry
"""
