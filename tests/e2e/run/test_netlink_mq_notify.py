"""AF_NETLINK's NETLINK_ROUTE socket and mq_notify's SIGEV_THREAD (issue 32, LTP mq_notify01
and mq_notify03: glibc's SIGEV_THREAD opens a netlink socket, which was EAFNOSUPPORT; sendmsg01:
`ip link set lo up` in its set-up). net/netlink/af_netlink.c (netlink_bind, netlink_autobind:
the first port id is the tgid, the next ones negative; netlink_rcv_skb, netlink_ack),
net/core/rtnetlink.c (rtnl_getlink, rtnl_newlink: ENODEV for a link that is not there; the
dumps getifaddrs and if_nameindex read) and ipc/mqueue.c (do_mq_notify: the cookie, then
netlink_getsockbyfilp's EBADF, ENOTSOCK, EINVAL; remove_notification and __do_notify send it
with NOTIFY_REMOVED and NOTIFY_WOKENUP). A C program built by the host's gcc (static; -m32 for
i386), run natively for the reference: it reads only what the host and the sandbox share (lo)."""
import subprocess

import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <mqueue.h>
#include <net/if.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

static sem_t called;
static void on_message(union sigval sv) { sem_post(&called); }

static int netlink(void) {
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    struct sockaddr_nl any = {.nl_family = AF_NETLINK};
    bind(fd, (struct sockaddr *)&any, sizeof any);
    return fd;
}

static int port_of(int fd) {
    struct sockaddr_nl name;
    socklen_t len = sizeof name;
    getsockname(fd, (struct sockaddr *)&name, &len);
    return (int)name.nl_pid;
}

static void ask_link(int fd, const char *name, int flags) {
    struct { struct nlmsghdr h; struct ifinfomsg i; char attrs[64]; } req;
    memset(&req, 0, sizeof req);
    struct rtattr *a = (struct rtattr *)req.attrs;
    a->rta_type = IFLA_IFNAME;
    a->rta_len = RTA_LENGTH(strlen(name) + 1);
    strcpy(RTA_DATA(a), name);
    req.h.nlmsg_len = NLMSG_LENGTH(sizeof req.i) + RTA_ALIGN(a->rta_len);
    req.h.nlmsg_type = RTM_GETLINK;
    req.h.nlmsg_flags = NLM_F_REQUEST | flags;
    req.h.nlmsg_seq = 7;
    send(fd, &req, req.h.nlmsg_len, 0);
    char reply[8192];
    int more = 1;
    while (more) {
        ssize_t n = recv(fd, reply, sizeof reply, MSG_DONTWAIT);
        if (n <= 0) break;
        for (struct nlmsghdr *h = (struct nlmsghdr *)reply; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
            if (h->nlmsg_type == NLMSG_ERROR) {
                struct nlmsgerr *e = NLMSG_DATA(h);
                printf("  %s: error %d seq %u%s\n", name, e->error, h->nlmsg_seq,
                       h->nlmsg_pid == (unsigned)port_of(fd) ? " to us" : "");
                more = 0;
            } else if (h->nlmsg_type == RTM_NEWLINK) {
                struct ifinfomsg *i = NLMSG_DATA(h);
                printf("  %s: link %d loopback %d up %d\n", name, i->ifi_index,
                       !!(i->ifi_flags & IFF_LOOPBACK), !!(i->ifi_flags & IFF_UP));
                more = flags & NLM_F_ACK;
            }
        }
    }
}

static void show(const char *what, long r) { printf("%s: %s\n", what, r < 0 ? strerror(errno) : "ok"); }

static int notify_thread(mqd_t q, int sock, char *cookie) {
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_THREAD;
    ev.sigev_signo = sock;
    ev.sigev_value.sival_ptr = cookie;
    return syscall(SYS_mq_notify, q, &ev);
}

static void read_cookie(int sock, const char *when) {
    char got[64];
    ssize_t n = recv(sock, got, sizeof got, MSG_DONTWAIT);
    printf("%s: %zd bytes, start %.5s, last %d\n", when, n, got, n > 0 ? got[n - 1] : -1);
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    int a = netlink(), b = netlink();
    printf("first port is the pid: %s\n", port_of(a) == getpid() ? "yes" : "no");
    printf("second port negative: %s\n", port_of(b) < 0 ? "yes" : "no");
    ask_link(a, "lo", 0);
    ask_link(a, "lo", NLM_F_ACK);
    ask_link(a, "nosuchlink0", 0);

    struct if_nameindex *names = if_nameindex();
    for (struct if_nameindex *n = names; n && n->if_index; n++)
        if (!strcmp(n->if_name, "lo")) printf("if_nameindex: %u %s\n", n->if_index, n->if_name);
    struct ifaddrs *all;
    getifaddrs(&all);
    for (struct ifaddrs *i = all; i; i = i->ifa_next) {
        if (strcmp(i->ifa_name, "lo") || !i->ifa_addr) continue;
        char text[64] = "";
        int family = i->ifa_addr->sa_family;
        if (family == AF_INET) inet_ntop(family, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, text, sizeof text);
        if (family == AF_INET6) inet_ntop(family, &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, text, sizeof text);
        printf("getifaddrs: lo family %d %s up %d\n", family, text, !!(i->ifa_flags & IFF_UP));
    }

    struct mq_attr attr = {.mq_maxmsg = 2, .mq_msgsize = 8};
    mq_unlink("/nl_notify");
    mqd_t q = mq_open("/nl_notify", O_RDWR | O_CREAT | O_EXCL, 0600, &attr);
    mq_unlink("/nl_notify");
    char cookie[32] = "hello, thread";
    int pipes[2], unix_pair[2];
    pipe(pipes);
    socketpair(AF_UNIX, SOCK_DGRAM, 0, unix_pair);
    show("SIGEV_THREAD to a pipe", notify_thread(q, pipes[0], cookie));
    show("SIGEV_THREAD to an AF_UNIX socket", notify_thread(q, unix_pair[0], cookie));
    show("SIGEV_THREAD to a closed fd", notify_thread(q, 99, cookie));
    show("SIGEV_THREAD from a bad cookie", notify_thread(q, b, (char *)16));
    show("SIGEV_THREAD to netlink", notify_thread(q, b, cookie));
    show("taken back", syscall(SYS_mq_notify, q, NULL));
    read_cookie(b, "removed");
    show("SIGEV_THREAD again", notify_thread(q, b, cookie));
    mq_send(q, "x", 1, 0);
    read_cookie(b, "woken");
    char buf[8];
    mq_receive(q, buf, sizeof buf, NULL);

    sem_init(&called, 0, 0);
    struct sigevent ev = {.sigev_notify = SIGEV_THREAD, .sigev_notify_function = on_message};
    show("glibc's SIGEV_THREAD", mq_notify(q, &ev));
    mq_send(q, "y", 1, 0);
    sem_wait(&called);
    printf("the thread ran\n");
    return 0;
}
"""
EXPECTED = """first port is the pid: yes
second port negative: yes
  lo: link 1 loopback 1 up 1
  lo: link 1 loopback 1 up 1
  lo: error 0 seq 7 to us
  nosuchlink0: error -19 seq 7 to us
if_nameindex: 1 lo
getifaddrs: lo family 17  up 1
getifaddrs: lo family 2 127.0.0.1 up 1
getifaddrs: lo family 10 ::1 up 1
SIGEV_THREAD to a pipe: Socket operation on non-socket
SIGEV_THREAD to an AF_UNIX socket: Invalid argument
SIGEV_THREAD to a closed fd: Bad file descriptor
SIGEV_THREAD from a bad cookie: Bad address
SIGEV_THREAD to netlink: ok
taken back: ok
removed: 32 bytes, start hello, last 2
SIGEV_THREAD again: ok
woken: 32 bytes, start hello, last 1
glibc's SIGEV_THREAD: ok
the thread ran
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "netlink_notify", PROGRAM, flags=("-pthread",),
                        arch=request.param)


def test_netlink_route_and_mq_notify_thread(program):
    native = subprocess.run([str(program)], capture_output=True, check=True, text=True)
    assert native.stdout == EXPECTED
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout.decode() == EXPECTED, result.describe()
