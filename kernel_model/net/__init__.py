"""Sockets (Linux net/socket.c, net/unix/af_unix.c): AF_UNIX stream, datagram and seqpacket
sockets between the sandbox's processes. There is no network: a family other than AF_UNIX
is refused (EAFNOSUPPORT) with a one-line note.

constants.py   the uapi numbers (families, types, MSG_*, SOL_SOCKET options, SCM_*)
address.py     struct sockaddr_un: filesystem, abstract and unnamed names
message.py     what a send puts in a receive queue: bytes, passed files, credentials
queue.py       the receive queues: a byte stream of segments, or whole messages
names.py       the bound names: abstract ones and socket inodes of the file system
unix.py        the socket itself, an open file description (the OpenFile interface)
options.py     getsockopt/setsockopt at SOL_SOCKET
"""
