"""Socket numbers of Linux's uapi, the same on i386 and x86-64 (include/linux/socket.h,
include/linux/net.h, include/uapi/asm-generic/socket.h, include/uapi/linux/un.h)."""
AF_UNSPEC, AF_UNIX, AF_INET, AF_INET6, AF_NETLINK = 0, 1, 2, 10, 16

SOCK_STREAM, SOCK_DGRAM, SOCK_RAW, SOCK_SEQPACKET = 1, 2, 3, 5
SOCK_TYPE_MASK = 0xF
SOCK_NONBLOCK = 0o4000          # = O_NONBLOCK
SOCK_CLOEXEC = 0o2000000        # = O_CLOEXEC

MSG_OOB = 0x1
MSG_PEEK = 0x2
MSG_DONTROUTE = 0x4
MSG_CTRUNC = 0x8
MSG_TRUNC = 0x20
MSG_DONTWAIT = 0x40
MSG_EOR = 0x80
MSG_WAITALL = 0x100
MSG_ERRQUEUE = 0x2000
MSG_NOSIGNAL = 0x4000
MSG_MORE = 0x8000
MSG_CMSG_CLOEXEC = 0x40000000

SHUT_RD, SHUT_WR, SHUT_RDWR = 0, 1, 2
RCV_SHUTDOWN, SEND_SHUTDOWN = 1, 2          # include/net/sock.h: sk_shutdown bits

SOL_SOCKET = 1
SO_DEBUG, SO_REUSEADDR, SO_TYPE, SO_ERROR, SO_DONTROUTE, SO_BROADCAST = 1, 2, 3, 4, 5, 6
SO_SNDBUF, SO_RCVBUF, SO_KEEPALIVE, SO_OOBINLINE, SO_NO_CHECK, SO_PRIORITY = 7, 8, 9, 10, 11, 12
SO_LINGER, SO_BSDCOMPAT, SO_REUSEPORT, SO_PASSCRED, SO_PEERCRED = 13, 14, 15, 16, 17
SO_RCVLOWAT, SO_SNDLOWAT, SO_RCVTIMEO, SO_SNDTIMEO = 18, 19, 20, 21
SO_ACCEPTCONN, SO_PEERSEC, SO_SNDBUFFORCE, SO_RCVBUFFORCE = 30, 31, 32, 33
SO_PROTOCOL, SO_DOMAIN = 38, 39

SCM_RIGHTS, SCM_CREDENTIALS = 1, 2
SCM_MAX_FD = 253                # include/net/scm.h: files one SCM_RIGHTS message may carry

SOMAXCONN = 4096                # net.core.somaxconn since Linux 5.4
WMEM_DEFAULT = 212992           # net.core.wmem_default / rmem_default
SOCK_MIN_SNDBUF = 4608          # include/net/sock.h: 2 * (2048 + sizeof(struct sk_buff)), rounded
SOCK_MIN_RCVBUF = 2304
SYSCTL_WMEM_MAX = 212992        # net.core.wmem_max / rmem_max: setsockopt's ceiling
MAX_DGRAM_QLEN = 10             # net.unix.max_dgram_qlen
