"""Sockets (Linux net/socket.c, net/unix/af_unix.c, net/ipv4): AF_UNIX stream, datagram and
seqpacket sockets between the sandbox's processes, and AF_INET/AF_INET6 TCP and UDP on a
loopback network inside the sandbox (127.0.0.0/8, ::1); any other host is unreachable
(ENETUNREACH, with a one-line note) and other families are refused (EAFNOSUPPORT).

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
"""
