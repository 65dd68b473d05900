"""shutdown(2)'s errors in Linux's order (issue 32, LTP shutdown02 got ENOTCONN for a bad `how`):
inet_shutdown refuses a `how` outside SHUT_RD..SHUT_RDWR with EINVAL before it looks at the
state, so a bound, unconnected TCP socket is EINVAL for -1 and 3 and ENOTCONN for a good one;
a UDP socket the same; EBADF and ENOTSOCK come first (net/socket.c __sys_shutdown). Compared
with the native run on both arches."""
import pytest

from tests.e2e.static_c import build_static, c_preamble, compare_with_native

pytestmark = pytest.mark.e2e

PROGRAM = c_preamble() + r"""
#include <netinet/in.h>
#include <sys/socket.h>

int main(void) {
    int tcp = socket(AF_INET, SOCK_STREAM, 0), udp = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in any = { .sin_family = AF_INET };
    bind(tcp, (struct sockaddr *)&any, sizeof any);
    int file = open("/proc/self/exe", O_RDONLY);
    result("closed fd", shutdown(99, -1));
    result("not a socket", shutdown(file, -1));
    result("tcp how -1", shutdown(tcp, -1));
    result("tcp how 3", shutdown(tcp, 3));
    result("tcp SHUT_RDWR", shutdown(tcp, SHUT_RDWR));
    result("udp how 7", shutdown(udp, 7));
    result("udp SHUT_WR", shutdown(udp, SHUT_WR));
    return 0;
}
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "shutdown_order", PROGRAM, arch=request.param)


def test_shutdown_errors_as_natively(program):
    compare_with_native(program, b"tcp how -1                 -1 EINVAL",
                        b"tcp SHUT_RDWR              -1 ENOTCONN")
