"""Raw IP sockets on the sandbox's loopback (issue 32: socket(AF_INET, SOCK_RAW, proto) was
EPROTONOSUPPORT; LTP socketcall01 on i386 and sendmsg03 make them). In a new network
namespace with lo up (so that natively nothing else reaches the sockets): inet_create's checks
(protocol 0 EPROTONOSUPPORT, negative EINVAL, EPERM for nobody), an ICMP echo request to
127.0.0.1 and 127.0.0.5 seen by every raw ICMP socket with its IPv4 header and answered by
the kernel (icmp_echo: an echo reply from the address asked, no DF), ICMP_FILTER (raw.c
raw_seticmpfilter, icmp_filter; EOPNOTSUPP on another protocol), IP_HDRINCL (default on
IPPROTO_RAW, raw_send_hdrinc completing the header: tot_len, source, checksum; EINVAL for
less than a header or an ihl past the data; a bad header dropped by ip_rcv_core),
raw_sendmsg's EINVAL, EAFNOSUPPORT, EDESTADDRREQ, EMSGSIZE (past 0xFFFF, and past 65515 bytes
of payload under a kernel header), EOPNOTSUPP, ENETUNREACH, getsockname's port (the
protocol), poll, MSG_TRUNC, raw_bind, and an ICMPv6 echo to ::1 (the kernel's checksum, the
reply without a header). The IP id and the checksum's value are not shown (Linux hashes the
id). Compared with the native run as root; built by the host's gcc (static; -m32 for i386)."""
import pytest

from tests.e2e.static_c import build_static, c_preamble, compare_with_native

pytestmark = pytest.mark.e2e

PROGRAM = c_preamble() + r"""
#include <sched.h>
#ifndef ICMP_FILTER
#define ICMP_FILTER 1
#endif
#include <poll.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <netinet/icmp6.h>
#include <arpa/inet.h>

static unsigned short csum(const unsigned char *p, int n) {
    unsigned long s = 0;
    for (int i = 0; i + 1 < n; i += 2) s += (p[i] << 8) | p[i + 1];
    if (n & 1) s += p[n - 1] << 8;
    while (s >> 16) s = (s & 0xffff) + (s >> 16);
    return (unsigned short)~s;
}

static struct sockaddr_in to4(const char *host) {
    struct sockaddr_in a = {.sin_family = AF_INET};
    inet_pton(AF_INET, host, &a.sin_addr);
    return a;
}

static void show4(const char *who, const unsigned char *b, long n, struct sockaddr_in *from) {
    char src[16], dst[16], frm[16];
    inet_ntop(AF_INET, b + 12, src, sizeof src);
    inet_ntop(AF_INET, b + 16, dst, sizeof dst);
    inet_ntop(AF_INET, &from->sin_addr, frm, sizeof frm);
    int ihl = (b[0] & 15) * 4;
    printf("%s: %ld bytes v%d ihl %d tos %d len %d frag %#x ttl %d proto %d %s > %s ipsum %s"
           " from %s port %d", who, n, b[0] >> 4, ihl, b[1], (b[2] << 8) | b[3],
           (b[6] << 8) | b[7], b[8], b[9], src, dst, csum(b, ihl) ? "bad" : "ok", frm,
           ntohs(from->sin_port));
    if (b[9] == IPPROTO_ICMP)
        printf(" icmp type %d code %d id %d seq %d sum %s", b[ihl], b[ihl + 1],
               (b[ihl + 4] << 8) | b[ihl + 5], (b[ihl + 6] << 8) | b[ihl + 7],
               csum(b + ihl, n - ihl) ? "bad" : "ok");
    printf("\n");
}

static void drain4(const char *who, int fd) {
    unsigned char b[70000];
    for (;;) {
        struct sockaddr_in from = {0};
        socklen_t fl = sizeof from;
        long n = recvfrom(fd, b, sizeof b, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
        if (n < 0) { result(who, n); return; }
        show4(who, b, n, &from);
    }
}

static int echo_request(unsigned char *p, int id, int seq, int datalen) {
    memset(p, 0, 8 + datalen);
    p[0] = ICMP_ECHO;
    p[4] = id >> 8; p[5] = id; p[6] = seq >> 8; p[7] = seq;
    for (int i = 0; i < datalen; i++) p[8 + i] = 'a' + i % 26;
    unsigned short s = csum(p, 8 + datalen);
    p[2] = s >> 8; p[3] = s;
    return 8 + datalen;
}

static void lo_up(void) {
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    struct ifreq ifr = {0};
    strcpy(ifr.ifr_name, "lo");
    ioctl(s, SIOCGIFFLAGS, &ifr);
    ifr.ifr_flags |= IFF_UP;
    result("lo up", ioctl(s, SIOCSIFFLAGS, &ifr));
    close(s);
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    result("unshare net", unshare(CLONE_NEWNET));
    lo_up();
    result("raw proto 0", socket(AF_INET, SOCK_RAW, 0));
    result("raw proto 256", socket(AF_INET, SOCK_RAW, 256));
    result("raw proto -1", socket(AF_INET, SOCK_RAW, -1));
    result("raw6 proto 0", socket(AF_INET6, SOCK_RAW, 0));
    result("raw6 proto 256", socket(AF_INET6, SOCK_RAW, 256));
    int a = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
    int b = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
    int r = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
    int x = socket(AF_INET, SOCK_RAW, 253);
    result("icmp sockets", a >= 0 && b >= 0 ? 0 : -1);
    result("IPPROTO_RAW socket", r >= 0 ? 0 : r);
    result("proto 253 socket", x >= 0 ? 0 : x);
    int v; socklen_t vl = sizeof v;
    getsockopt(a, SOL_IP, IP_HDRINCL, &v, &vl); printf("hdrincl icmp %d\n", v);
    getsockopt(r, SOL_IP, IP_HDRINCL, &v, &vl); printf("hdrincl raw %d\n", v);
    getsockopt(a, SOL_SOCKET, SO_PROTOCOL, &v, &vl); printf("SO_PROTOCOL %d\n", v);
    getsockopt(a, SOL_SOCKET, SO_TYPE, &v, &vl); printf("SO_TYPE %d\n", v);
    struct sockaddr_in me = {0}; socklen_t ml = sizeof me;
    getsockname(a, (struct sockaddr *)&me, &ml);
    printf("sockname family %d port %d addr %#x len %d\n", me.sin_family, ntohs(me.sin_port), me.sin_addr.s_addr, ml);

    unsigned char pkt[70000];
    struct sockaddr_in lo = to4("127.0.0.1");
    int n = echo_request(pkt, 0x1234, 1, 20);
    struct pollfd pf = {.fd = b, .events = POLLIN | POLLOUT};
    result("poll before", poll(&pf, 1, 0)); printf("revents %#x\n", pf.revents);
    result("echo to 127.0.0.1", sendto(a, pkt, n, 0, (struct sockaddr *)&lo, sizeof lo));
    result("poll after", poll(&pf, 1, 0)); printf("revents %#x\n", pf.revents);
    drain4("a", a);
    drain4("b", b);
    drain4("253", x);
    drain4("raw", r);

    unsigned int filter = 1u << ICMP_ECHO;
    result("ICMP_FILTER b", setsockopt(b, SOL_RAW, ICMP_FILTER, &filter, sizeof filter));
    unsigned int got = 0; socklen_t gl = 8;
    result("get ICMP_FILTER", getsockopt(b, SOL_RAW, ICMP_FILTER, &got, &gl));
    printf("filter %#x len %d\n", got, gl);
    result("ICMP_FILTER on 253", setsockopt(x, SOL_RAW, ICMP_FILTER, &filter, sizeof filter));
    result("SOL_RAW 7", setsockopt(b, SOL_RAW, 7, &filter, sizeof filter));
    struct sockaddr_in lo5 = to4("127.0.0.5");
    n = echo_request(pkt, 0x4321, 2, 3);
    result("echo to 127.0.0.5", sendto(a, pkt, n, 0, (struct sockaddr *)&lo5, sizeof lo5));
    drain4("a", a);
    drain4("b filtered", b);

    result("253 to lo", sendto(x, "hello", 5, 0, (struct sockaddr *)&lo, sizeof lo));
    drain4("253", x);
    drain4("a", a);

    unsigned char h[40] = {0x45, 0, 0, 0, 0, 0, 0x40, 0, 9, 253};
    memcpy(h + 16, &lo.sin_addr, 4);
    memcpy(h + 20, "twenty bytes payload", 20);
    result("hdrincl on raw", sendto(r, h, 40, 0, (struct sockaddr *)&lo, sizeof lo));
    drain4("253", x);
    drain4("raw", r);
    int one = 1;
    result("IP_HDRINCL on 253", setsockopt(x, SOL_IP, IP_HDRINCL, &one, sizeof one));
    h[8] = 7;
    result("hdrincl on 253", sendto(x, h, 40, 0, (struct sockaddr *)&lo, sizeof lo));
    drain4("253", x);
    result("hdrincl 19 bytes", sendto(x, h, 19, 0, (struct sockaddr *)&lo, sizeof lo));
    h[0] = 0x4f;
    result("hdrincl ihl 60 > 40", sendto(x, h, 40, 0, (struct sockaddr *)&lo, sizeof lo));
    drain4("253", x);
    struct sockaddr_in zero = {0};
    memset(pkt, 0xcc, 400);
    result("hdrincl 0xcc to zeroes", sendto(x, pkt, 400, 0, (struct sockaddr *)&zero, sizeof zero));
    drain4("253", x);

    result("short name", sendto(a, pkt, 8, 0, (struct sockaddr *)&lo, 8));
    struct sockaddr_in6 six = {.sin6_family = AF_INET6};
    result("AF_INET6 name", sendto(a, pkt, 8, 0, (struct sockaddr *)&six, sizeof lo));
    result("no name", send(a, pkt, 8, 0));
    result("65536 bytes", sendto(x, pkt, 65536, 0, (struct sockaddr *)&lo, sizeof lo));
    int zeroint = 0;
    setsockopt(x, SOL_IP, IP_HDRINCL, &zeroint, sizeof zeroint);
    result("65516 bytes", sendto(x, pkt, 65516, 0, (struct sockaddr *)&lo, sizeof lo));
    result("65515 bytes", sendto(x, pkt, 65515, 0, (struct sockaddr *)&lo, sizeof lo));
    result("MSG_OOB", sendto(x, pkt, 8, MSG_OOB, (struct sockaddr *)&lo, sizeof lo));
    struct sockaddr_in far = to4("10.1.2.3");
    result("to 10.1.2.3", sendto(x, pkt, 8, 0, (struct sockaddr *)&far, sizeof far));
    drain4("253", x);
    result("connect 253", connect(x, (struct sockaddr *)&lo, sizeof lo));
    result("send connected", send(x, "abc", 3, 0));
    char small[4];
    result("recv short", recv(x, small, sizeof small, MSG_TRUNC));
    result("bind 127.0.0.1", bind(b, (struct sockaddr *)&lo, sizeof lo));
    getsockname(b, (struct sockaddr *)&me, &ml);
    printf("bound sockname port %d addr %#x\n", ntohs(me.sin_port), me.sin_addr.s_addr);
    result("bind 10.1.2.3", bind(a, (struct sockaddr *)&far, sizeof far));

    int six_s = socket(AF_INET6, SOCK_RAW, IPPROTO_ICMPV6);
    result("icmpv6 socket", six_s >= 0 ? 0 : six_s);
    six.sin6_addr = in6addr_loopback;
    unsigned char e6[16] = {128, 0, 0, 0, 0x12, 0x34, 0, 7, 'p', 'i', 'n', 'g'};
    result("echo6 to ::1", sendto(six_s, e6, 12, 0, (struct sockaddr *)&six, sizeof six));
    for (;;) {
        unsigned char in[100]; struct sockaddr_in6 f6; socklen_t f6l = sizeof f6;
        long k = recvfrom(six_s, in, sizeof in, MSG_DONTWAIT, (struct sockaddr *)&f6, &f6l);
        if (k < 0) { result("icmpv6", k); break; }
        printf("icmpv6: %ld bytes type %d code %d sum %s id %d seq %d from-len %d loopback %d\n", k, in[0], in[1],
               in[2] | in[3] ? "set" : "zero", (in[4] << 8) | in[5], (in[6] << 8) | in[7], f6l,
               IN6_IS_ADDR_LOOPBACK(&f6.sin6_addr));
    }
    if (fork() == 0) {
        setresuid(65534, 65534, 65534);
        result("raw as nobody", socket(AF_INET, SOCK_RAW, IPPROTO_ICMP));
        result("raw6 as nobody", socket(AF_INET6, SOCK_RAW, IPPROTO_ICMPV6));
        _exit(0);
    }
    wait(NULL);
    return 0;
}
"""
EDGES = c_preamble() + r"""
#include <sched.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/icmp6.h>
#include <arpa/inet.h>

static void drain(const char *who, int fd) {
    unsigned char b[70000];
    for (;;) {
        long n = recv(fd, b, sizeof b, MSG_DONTWAIT);
        if (n < 0) { result(who, n); return; }
        printf("%s: %ld bytes first %d\n", who, n, b[0] >> 4 == 4 ? b[20] : b[0]);
    }
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    result("unshare net", unshare(CLONE_NEWNET));
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    struct ifreq ifr = {0};
    strcpy(ifr.ifr_name, "lo");
    ioctl(s, SIOCGIFFLAGS, &ifr);
    ifr.ifr_flags |= IFF_UP;
    result("lo up", ioctl(s, SIOCSIFFLAGS, &ifr));
    struct sockaddr_in lo = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int icmp = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP), r = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
    int p255 = socket(AF_INET, SOCK_RAW, 255);
    unsigned char bad[8] = {8, 0, 1, 2, 0, 0, 0, 0};
    result("echo with bad sum", sendto(icmp, bad, 8, 0, (struct sockaddr *)&lo, sizeof lo));
    drain("icmp", icmp);
    result("icmp 4 bytes", sendto(icmp, bad, 4, 0, (struct sockaddr *)&lo, sizeof lo));
    drain("icmp", icmp);
    unsigned char h[24] = {0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 255};
    memcpy(h + 16, &lo.sin_addr, 4);
    result("proto 255 datagram", sendto(r, h, 24, 0, (struct sockaddr *)&lo, sizeof lo));
    drain("raw", r);
    drain("255", p255);
    int six = socket(AF_INET6, SOCK_RAW, IPPROTO_ICMPV6);
    struct sockaddr_in6 l6 = {.sin6_family = AF_INET6, .sin6_addr = in6addr_loopback};
    result("icmpv6 3 bytes", sendto(six, bad, 3, 0, (struct sockaddr *)&l6, sizeof l6));
    result("icmpv6 4 bytes", sendto(six, bad, 4, 0, (struct sockaddr *)&l6, sizeof l6));
    drain("icmpv6", six);
    static char big[70000];
    result("icmpv6 65535", sendto(six, big, 65535, 0, (struct sockaddr *)&l6, sizeof l6));
    result("icmpv6 65536", sendto(six, big, 65536, 0, (struct sockaddr *)&l6, sizeof l6));
    drain("icmpv6", six);
    struct sockaddr_in6 m6 = {.sin6_family = AF_INET6};
    inet_pton(AF_INET6, "::ffff:127.0.0.1", &m6.sin6_addr);
    result("icmpv6 to v4-mapped", sendto(six, bad, 8, 0, (struct sockaddr *)&m6, sizeof m6));
    struct icmp6_filter f;
    ICMP6_FILTER_SETPASSALL(&f);
    ICMP6_FILTER_SETBLOCK(128, &f);
    result("ICMP6_FILTER", setsockopt(six, IPPROTO_ICMPV6, ICMP6_FILTER, &f, sizeof f));
    unsigned char e6[8] = {128, 0, 0, 0, 0, 1, 0, 1};
    result("echo6", sendto(six, e6, 8, 0, (struct sockaddr *)&l6, sizeof l6));
    drain("icmpv6 filtered", six);
    int u6 = socket(AF_INET6, SOCK_RAW, 253);
    result("253 v6 ICMP6_FILTER", setsockopt(u6, IPPROTO_ICMPV6, ICMP6_FILTER, &f, sizeof f));
    result("253 v6 send", sendto(u6, "hi", 2, 0, (struct sockaddr *)&l6, sizeof l6));
    drain("253 v6", u6);
    result("v6 SOL_IP HDRINCL", setsockopt(u6, SOL_IP, 3, &(int){1}, 4));
    return 0;
}
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "raw_sockets", PROGRAM, arch=request.param)


def test_raw_sockets_as_natively(program):
    compare_with_native(program, b"b filtered: 31 bytes", b"a: 48 bytes v4 ihl 20 tos 0 len 48 frag 0 ",
                        b"icmpv6: 12 bytes type 129", b"hdrincl ihl 60 > 40        -1 EINVAL")


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def edges(request, tmp_path_factory):
    return build_static(tmp_path_factory, "raw_socket_edges", EDGES, arch=request.param)


def test_raw_socket_edges_as_natively(edges):
    """A bad echo checksum (a copy, no reply), ICMP messages shorter than the filter's header
    (4 bytes: none for ICMP, a copy for ICMPv6), IPPROTO_RAW sockets do receive protocol 255,
    ICMPv6's EINVAL under 4 bytes and EMSGSIZE past 65535, ICMP6_FILTER."""
    compare_with_native(edges, b"icmpv6: 4 bytes first 8", b"255: 24 bytes first 0",
                        b"icmpv6 filtered: 8 bytes first 129")
