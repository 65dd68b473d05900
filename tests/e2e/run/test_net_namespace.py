"""Network namespaces (issue 32, LTP clone09, setsockopt05, setsockopt07, setsockopt09:
CONFIG_NET_NS was off and CLONE_NEWNET EPERM; tst_setup_netns brings lo up with SIOCSIFMTU and
SIOCSIFFLAGS). net/core/net_namespace.c: unshare(CLONE_NEWNET) gives a loopback network of
its own, its lo down at first (flags IFF_LOOPBACK, MTU 64 KiB; connect is ENETUNREACH) until
SIOCSIFFLAGS brings it up (with SIOCSIFMTU's MTU); the first network's ports and abstract
AF_UNIX names are not reachable from it (ECONNREFUSED) and free to bind there; its
net.ipv4.conf.lo.tag starts at the first network's default (devinet's inheritance), not at
the first network's lo; the first network's lo is unchanged. SIOCGIFINDEX of a link that is
not there is ENODEV. A C program built by the host's gcc (static; -m32 for i386), run
natively for the reference (as root)."""
import subprocess

import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <stddef.h>
#include <unistd.h>

static void show(const char *what, long r) { printf("%-44s %ld %s\n", what, r < 0 ? -1L : r, r < 0 ? strerrorname_np(errno) : ""); }
static unsigned long ino(const char *path) { struct stat st; if (stat(path, &st)) return 0; return st.st_ino; }
static struct sockaddr_in loopback(int port) {
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
}
static int tcp_connect(int port) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = loopback(port);
    int r = connect(s, (struct sockaddr *)&a, sizeof a);
    int e = errno;
    close(s);
    errno = e;
    return r;
}
static int tcp_listen(int port) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = loopback(port);
    if (bind(s, (struct sockaddr *)&a, sizeof a) < 0) return -1;
    listen(s, 4);
    return s;
}
static int abstract(const char *name, int do_bind) {
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a = { .sun_family = AF_UNIX };
    memcpy(a.sun_path + 1, name, strlen(name));
    socklen_t len = offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name);
    if (do_bind) { if (bind(s, (struct sockaddr *)&a, len) < 0) return -1; listen(s, 4); return s; }
    int r = connect(s, (struct sockaddr *)&a, len);
    int e = errno; close(s); errno = e;
    return r;
}
static void lo(const char *who) {
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    strcpy(ifr.ifr_name, "lo");
    ioctl(s, SIOCGIFINDEX, &ifr);
    int index = ifr.ifr_ifindex;
    ioctl(s, SIOCGIFFLAGS, &ifr);
    int flags = ifr.ifr_flags & (IFF_UP | IFF_LOOPBACK | IFF_RUNNING);
    ioctl(s, SIOCGIFMTU, &ifr);
    printf("%s: lo index %d flags %#x mtu %d\n", who, index, flags, ifr.ifr_mtu);
    close(s);
}
static int lo_up(int mtu) {
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    strcpy(ifr.ifr_name, "lo");
    ifr.ifr_mtu = mtu;
    if (ioctl(s, SIOCSIFMTU, &ifr) < 0) return -1;
    ifr.ifr_flags = IFF_UP;
    int r = ioctl(s, SIOCSIFFLAGS, &ifr);
    close(s);
    return r;
}
static void tag(const char *who) {
    char a[16] = "", d[16] = "";
    int fd = open("/proc/sys/net/ipv4/conf/lo/tag", O_RDONLY); read(fd, a, 15); close(fd);
    fd = open("/proc/sys/net/ipv4/conf/default/tag", O_RDONLY); read(fd, d, 15); close(fd);
    a[strcspn(a, "\n")] = d[strcspn(d, "\n")] = 0;
    printf("%s: conf/lo/tag %s default %s\n", who, a, d);
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    unsigned long first = ino("/proc/self/ns/net");
    int server = tcp_listen(47001);
    int named = abstract("trapline-netns", 1);
    show("initial: listen on 47001", server);
    show("initial: abstract name bound", named);
    struct ifreq bad;
    memset(&bad, 0, sizeof bad);
    strcpy(bad.ifr_name, "eth9");
    show("initial: SIOCGIFINDEX of another link", ioctl(server, SIOCGIFINDEX, &bad));
    int fd = open("/proc/sys/net/ipv4/conf/lo/tag", O_WRONLY);
    show("initial: set conf/lo/tag 7", write(fd, "7", 1));
    close(fd);
    tag("initial");
    int sync[2];
    pipe(sync);
    pid_t child = fork();
    if (child == 0) {
        show("child: unshare(CLONE_NEWNET)", unshare(CLONE_NEWNET));
        printf("child: new namespace %d\n", ino("/proc/self/ns/net") != first);
        lo("child, at first");
        tag("child");
        show("child: connect while lo is down", tcp_connect(47001));
        show("child: lo up, mtu 1500", lo_up(1500));
        lo("child, after");
        show("child: connect to the other network's port", tcp_connect(47001));
        show("child: connect to the other's abstract name", abstract("trapline-netns", 0));
        int mine = tcp_listen(47001);
        show("child: the same port is free here", mine);
        show("child: connect to its own", tcp_connect(47001));
        show("child: the same abstract name is free", abstract("trapline-netns", 1));
        int back = open("/proc/1/ns/net", O_RDONLY);
        (void)back;
        write(sync[1], "x", 1);
        _exit(0);
    }
    char c;
    read(sync[0], &c, 1);
    waitpid(child, NULL, 0);
    lo("initial, unchanged");
    show("initial: its own port still answers", tcp_connect(47001));
    fd = open("/proc/sys/net/ipv4/conf/lo/tag", O_WRONLY);
    write(fd, "0", 1);
    close(fd);
    return 0;
}
"""
EXPECTED = """initial: listen on 47001                     3 
initial: abstract name bound                 4 
initial: SIOCGIFINDEX of another link        -1 ENODEV
initial: set conf/lo/tag 7                   1 
initial: conf/lo/tag 7 default 0
child: unshare(CLONE_NEWNET)                 0 
child: new namespace 1
child, at first: lo index 1 flags 0x8 mtu 65536
child: conf/lo/tag 0 default 0
child: connect while lo is down              -1 ENETUNREACH
child: lo up, mtu 1500                       0 
child, after: lo index 1 flags 0x49 mtu 1500
child: connect to the other network's port   -1 ECONNREFUSED
child: connect to the other's abstract name  -1 ECONNREFUSED
child: the same port is free here            7 
child: connect to its own                    0 
child: the same abstract name is free        8 
initial, unchanged: lo index 1 flags 0x49 mtu 65536
initial: its own port still answers          0 
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "net_ns", PROGRAM, arch=request.param)


def test_network_namespace_is_a_loopback_network_of_its_own(program):
    native = subprocess.run([str(program)], capture_output=True, check=True, text=True)
    assert native.stdout == EXPECTED
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout.decode() == EXPECTED, result.describe()
