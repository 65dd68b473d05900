"""ioctl(2) on sockets (issue 32, LTP sockioctl01 got ENOTTY for SIOCGIFCONF and EFAULT's
cases): net/socket.c sock_ioctl's order over the sandbox's lo. SIOCGIFCONF lists lo's
127.0.0.1 first (the host has more interfaces after it: only the first entry and the sizes'
arithmetic are printed), SIOCGIFFLAGS/INDEX/MTU/NAME/ADDR/NETMASK answer lo's values, ENODEV
for another name, EFAULT for an unreadable struct ifreq, EPERM for SIOCSIFFLAGS without
CAP_NET_ADMIN, TCP's SIOCATMARK 0 (EFAULT for NULL) and UDP's ENOTTY, a request the socket
layer does not know ENOTTY. Compared with the native run on both arches."""
import pytest

from tests.e2e.static_c import build_static, c_preamble, compare_with_native

pytestmark = pytest.mark.e2e

PROGRAM = c_preamble() + r"""
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

static void named(struct ifreq *r, const char *name) {
    memset(r, 0, sizeof *r);
    strcpy(r->ifr_name, name);
}

static void show_addr(const char *what, int s, unsigned long req) {
    struct ifreq r;
    named(&r, "lo");
    long ret = ioctl(s, req, &r);
    result(what, ret);
    if (ret == 0)
        printf("  family %d %s\n", r.ifr_addr.sa_family,
               inet_ntoa(((struct sockaddr_in *)&r.ifr_addr)->sin_addr));
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    int udp = socket(AF_INET, SOCK_DGRAM, 0), tcp = socket(AF_INET, SOCK_STREAM, 0);
    int unx = socket(AF_UNIX, SOCK_STREAM, 0);
    struct ifreq buf[32];
    struct ifconf ifc = { .ifc_len = sizeof buf, .ifc_buf = (char *)buf };
    result("SIOCGIFCONF", ioctl(udp, SIOCGIFCONF, &ifc));
    printf("  first %s %s, whole entries %d\n", buf[0].ifr_name,
           inet_ntoa(((struct sockaddr_in *)&buf[0].ifr_addr)->sin_addr),
           ifc.ifc_len > 0 && ifc.ifc_len % (int)sizeof(struct ifreq) == 0);
    struct ifconf query = { .ifc_len = 0, .ifc_buf = NULL };
    result("SIOCGIFCONF NULL buffer", ioctl(unx, SIOCGIFCONF, &query));
    printf("  length asked %d\n", query.ifc_len == ifc.ifc_len);
    struct ifconf small = { .ifc_len = sizeof(struct ifreq) - 1, .ifc_buf = (char *)buf };
    result("SIOCGIFCONF short buffer", ioctl(udp, SIOCGIFCONF, &small));
    printf("  length %d\n", small.ifc_len);
    result("SIOCGIFCONF bad ifconf", ioctl(udp, SIOCGIFCONF, NULL));
    struct ifreq r;
    named(&r, "lo");
    result("SIOCGIFFLAGS lo", ioctl(udp, SIOCGIFFLAGS, &r));
    printf("  flags %#x\n", r.ifr_flags & 0xffff);
    named(&r, "lo");
    result("SIOCGIFFLAGS unix lo", ioctl(unx, SIOCGIFFLAGS, &r));
    printf("  flags %#x\n", r.ifr_flags & 0xffff);
    result("SIOCGIFFLAGS NULL", ioctl(udp, SIOCGIFFLAGS, NULL));
    result("SIOCSIFFLAGS NULL", ioctl(udp, SIOCSIFFLAGS, NULL));
    named(&r, "nosuch0");
    result("SIOCGIFFLAGS nosuch0", ioctl(udp, SIOCGIFFLAGS, &r));
    named(&r, "lo");
    result("SIOCGIFINDEX lo", ioctl(udp, SIOCGIFINDEX, &r));
    printf("  index %d\n", r.ifr_ifindex);
    named(&r, "lo");
    result("SIOCGIFMTU lo", ioctl(tcp, SIOCGIFMTU, &r));
    printf("  mtu %d\n", r.ifr_mtu);
    memset(&r, 0, sizeof r);
    r.ifr_ifindex = 1;
    result("SIOCGIFNAME 1", ioctl(udp, SIOCGIFNAME, &r));
    printf("  name %s\n", r.ifr_name);
    r.ifr_ifindex = 9999;
    result("SIOCGIFNAME 9999", ioctl(udp, SIOCGIFNAME, &r));
    show_addr("SIOCGIFADDR lo", udp, SIOCGIFADDR);
    show_addr("SIOCGIFNETMASK lo", tcp, SIOCGIFNETMASK);
    show_addr("SIOCGIFADDR unix", unx, SIOCGIFADDR);
    int mark = 7;
    result("SIOCATMARK tcp", ioctl(tcp, SIOCATMARK, &mark));
    printf("  mark %d\n", mark);
    result("SIOCATMARK tcp NULL", ioctl(tcp, SIOCATMARK, NULL));
    result("SIOCATMARK udp", ioctl(udp, SIOCATMARK, &mark));
    result("SIOCATMARK udp NULL", ioctl(udp, SIOCATMARK, NULL));
    result("TCGETS udp", ioctl(udp, 0x5401, &r));
    result("SIOCDEVPRIVATE+15 lo", ioctl(udp, 0x89ff, &r));
    named(&r, "nosuch0");
    result("SIOCDEVPRIVATE nosuch0", ioctl(udp, 0x89f0, &r));
    result("0x8960 udp", ioctl(udp, 0x8960, &r));
    if (fork() == 0) {
        setuid(65534);
        named(&r, "lo");
        r.ifr_flags = IFF_UP | IFF_LOOPBACK | IFF_RUNNING;
        result("nobody SIOCSIFFLAGS lo", ioctl(udp, SIOCSIFFLAGS, &r));
        named(&r, "lo");
        result("nobody SIOCGIFFLAGS lo", ioctl(udp, SIOCGIFFLAGS, &r));
        _exit(0);
    }
    wait(NULL);
    return 0;
}
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "socket_ioctls", PROGRAM, arch=request.param)


def test_socket_ioctls_as_natively(program):
    compare_with_native(program, b"first lo 127.0.0.1, whole entries 1",
                        b"SIOCGIFFLAGS NULL          -1 EFAULT",
                        b"nobody SIOCSIFFLAGS lo     -1 EPERM", b"SIOCATMARK udp             -1 ENOTTY",
                        b"SIOCDEVPRIVATE+15 lo       -1 EOPNOTSUPP")
