"""IPv4 clients of IPv6 sockets, IPV6_ADDRFORM and TCP's connect(AF_UNSPEC) (issue 32, LTP
connect02: the accepted end of an IPv4 client was an IPv4 socket, so IPV6_ADDRFORM was
ENOPROTOOPT). net/ipv6/tcp_ipv6.c tcp_v6_syn_recv_sock (the accepted end of an IPv6 listener
is IPv6, its addresses v4-mapped), net/ipv6/ipv6_sockglue.c IPV6_ADDRFORM (EINVAL for a short
value or another family, ENOTCONN unless connected, EADDRNOTAVAIL for an IPv6 peer; then an IPv4
socket with no IPv6 level), net/ipv4/af_inet.c inet_stream_connect and tcp_disconnect (AF_UNSPEC
resets the connection: the peer's recv says ECONNRESET, then the end of file, its send EPIPE;
the socket gives back a port the user did not choose and may bind and listen anew). A C program
built by the host's gcc (static; -m32 for i386), run natively for the reference."""
import subprocess

import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void show(const char *what, long r) { printf("%s: %s\n", what, r < 0 ? strerror(errno) : "ok"); }

static void name_of(const char *what, int fd, int peer) {
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    int r = peer ? getpeername(fd, (struct sockaddr *)&ss, &len) : getsockname(fd, (struct sockaddr *)&ss, &len);
    if (r < 0) { printf("%s: %s\n", what, strerror(errno)); return; }
    char text[64];
    if (ss.ss_family == AF_INET)
        inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, text, sizeof text);
    else
        inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, text, sizeof text);
    printf("%s: family %d len %u %s\n", what, ss.ss_family, len, text);
}

static int domain_of(int fd) { int d; socklen_t l = sizeof d; getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &d, &l); return d; }
static int addrform(int fd, int value, socklen_t len) { return setsockopt(fd, SOL_IPV6, IPV6_ADDRFORM, &value, len); }

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    signal(SIGPIPE, SIG_IGN);
    int listener = socket(AF_INET6, SOCK_STREAM, 0);
    struct sockaddr_in6 any = {.sin6_family = AF_INET6, .sin6_addr = in6addr_any};
    bind(listener, (struct sockaddr *)&any, sizeof any);
    listen(listener, 5);
    socklen_t len = sizeof any;
    getsockname(listener, (struct sockaddr *)&any, &len);
    int form;
    len = sizeof form;
    show("ADDRFORM of a listener", getsockopt(listener, SOL_IPV6, IPV6_ADDRFORM, &form, &len));
    show("to IPv4, a listener", addrform(listener, AF_INET, 4));

    int v4 = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = any.sin6_port, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    show("IPv4 client connects to the IPv6 listener", connect(v4, (struct sockaddr *)&to, sizeof to));
    int accepted = accept(listener, NULL, NULL);
    printf("accepted domain %d\n", domain_of(accepted));
    name_of("accepted's name", accepted, 0);
    name_of("accepted's peer", accepted, 1);
    name_of("client's peer", v4, 1);
    len = sizeof form;
    getsockopt(accepted, SOL_IPV6, IPV6_ADDRFORM, &form, &len);
    printf("ADDRFORM reads %d\n", form);
    show("to IPv6", addrform(accepted, AF_INET6, 4));
    show("short value", addrform(accepted, AF_INET, 2));

    int v6 = socket(AF_INET6, SOCK_STREAM, 0);
    struct sockaddr_in6 to6 = {.sin6_family = AF_INET6, .sin6_port = any.sin6_port, .sin6_addr = in6addr_loopback};
    connect(v6, (struct sockaddr *)&to6, sizeof to6);
    int accepted6 = accept(listener, NULL, NULL);
    show("to IPv4, an IPv6 peer", addrform(accepted6, AF_INET, 4));

    show("to IPv4, an IPv4 peer", addrform(accepted, AF_INET, 4));
    printf("now domain %d\n", domain_of(accepted));
    name_of("its name", accepted, 0);
    name_of("its peer", accepted, 1);
    int one = 1;
    show("an IPv6 option now", setsockopt(accepted, SOL_IPV6, IPV6_V6ONLY, &one, sizeof one));
    send(v4, "hi", 2, 0);
    char buf[8] = "";
    printf("received %zd\n", recv(accepted, buf, sizeof buf, 0));
    struct sockaddr unspec = {.sa_family = AF_UNSPEC};
    show("disconnect", connect(accepted, &unspec, sizeof unspec));
    show("client's recv", recv(v4, buf, sizeof buf, 0));
    show("client's recv again", recv(v4, buf, sizeof buf, 0));
    show("client's send", send(v4, "x", 1, 0));
    name_of("client's peer after", v4, 1);
    name_of("disconnected name", accepted, 0);
    struct sockaddr_in any4 = {.sin_family = AF_INET};
    show("bind it anew", bind(accepted, (struct sockaddr *)&any4, sizeof any4));
    show("listen", listen(accepted, 1));
    len = sizeof any4;
    getsockname(accepted, (struct sockaddr *)&any4, &len);
    any4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int again = socket(AF_INET, SOCK_STREAM, 0);
    show("connect to it", connect(again, (struct sockaddr *)&any4, sizeof any4));
    show("accept", accept(accepted, NULL, NULL));
    return 0;
}
"""
EXPECTED = """ADDRFORM of a listener: Transport endpoint is not connected
to IPv4, a listener: Transport endpoint is not connected
IPv4 client connects to the IPv6 listener: ok
accepted domain 10
accepted's name: family 10 len 28 ::ffff:127.0.0.1
accepted's peer: family 10 len 28 ::ffff:127.0.0.1
client's peer: family 2 len 16 127.0.0.1
ADDRFORM reads 10
to IPv6: Invalid argument
short value: Invalid argument
to IPv4, an IPv6 peer: Cannot assign requested address
to IPv4, an IPv4 peer: ok
now domain 2
its name: family 2 len 16 127.0.0.1
its peer: family 2 len 16 127.0.0.1
an IPv6 option now: Protocol not available
received 2
disconnect: ok
client's recv: Connection reset by peer
client's recv again: ok
client's send: Broken pipe
client's peer after: Transport endpoint is not connected
disconnected name: family 2 len 16 0.0.0.0
bind it anew: ok
listen: ok
connect to it: ok
accept: ok
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "dual_stack", PROGRAM, arch=request.param)


def test_ipv4_clients_of_ipv6_sockets(program):
    native = subprocess.run([str(program)], capture_output=True, check=True, text=True)
    assert native.stdout == EXPECTED
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout.decode() == EXPECTED, result.describe()
