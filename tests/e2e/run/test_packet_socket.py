"""An AF_PACKET socket's set-up (issue 32, LTP setsockopt02: socket(AF_PACKET) was
EAFNOSUPPORT). net/packet/af_packet.c: packet_create (CAP_NET_RAW: EPERM with euid nobody; a
raw or datagram type, ESOCKTNOSUPPORT otherwise), packet_setsockopt (PACKET_VERSION V1..V3,
PACKET_RESERVE up to INT_MAX, EBUSY while a ring is set), packet_set_ring (page-aligned blocks,
frames 16-aligned and holding the header, the reserve and a sockaddr_ll, whole frames per block
matching tp_frame_nr, V3's block header and private area, no V3 TX ring, EBUSY for a second
ring), packet_getsockopt (PACKET_HDRLEN: the header structs' sizes), packet_bind (ENODEV for a
link that is not there), packet_getname (lo's hardware type and address length), a send's
address shorter than its sll_addr and hardware address (EINVAL: it was a kernel panic), ENXIO for
a send with no link, EOPNOTSUPP for connect and listen. A C program built by the host's gcc
(static; -m32 for i386), run natively for the reference."""
import subprocess

import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void show(const char *what, long r) { printf("%s: %s\n", what, r < 0 ? strerror(errno) : "ok"); }
static int version(int s, int v) { return setsockopt(s, SOL_PACKET, PACKET_VERSION, &v, sizeof v); }
static int ring3(int s, int opt, unsigned block, unsigned nr, unsigned frame, unsigned frames, unsigned priv) {
    struct tpacket_req3 r = {.tp_block_size = block, .tp_block_nr = nr, .tp_frame_size = frame,
                             .tp_frame_nr = frames, .tp_retire_blk_tov = 100, .tp_sizeof_priv = priv};
    return setsockopt(s, SOL_PACKET, opt, &r, sizeof r);
}
static int ring(int s, unsigned block, unsigned nr, unsigned frame, unsigned frames) {
    struct tpacket_req r = {.tp_block_size = block, .tp_block_nr = nr, .tp_frame_size = frame, .tp_frame_nr = frames};
    return setsockopt(s, SOL_PACKET, PACKET_RX_RING, &r, sizeof r);
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    show("stream", socket(AF_PACKET, SOCK_STREAM, htons(ETH_P_ALL)));
    int s = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
    show("raw", s);
    show("version 3", version(s, TPACKET_V3 + 1));
    show("version V3", version(s, TPACKET_V3));
    int hdr = TPACKET_V3;
    socklen_t len = sizeof hdr;
    getsockopt(s, SOL_PACKET, PACKET_HDRLEN, &hdr, &len);
    printf("V3 header %d\n", hdr);
    hdr = TPACKET_V1;
    getsockopt(s, SOL_PACKET, PACKET_HDRLEN, &hdr, &len);
    printf("V1 header %d\n", hdr);
    hdr = 7;
    show("header of version 7", getsockopt(s, SOL_PACKET, PACKET_HDRLEN, &hdr, &len));
    show("V3 tx ring", ring3(s, PACKET_TX_RING, 4096, 2, 4096, 2, 0));
    show("huge private area", ring3(s, PACKET_RX_RING, 4096, 2, 4096, 2, 3u << 30));
    show("frames mismatch", ring3(s, PACKET_RX_RING, 4096, 2, 4096, 3, 0));
    show("unaligned frame", ring3(s, PACKET_RX_RING, 4096, 2, 2056, 2, 0));
    show("block not a page", ring3(s, PACKET_RX_RING, 6000, 2, 2048, 4, 0));
    show("good ring", ring3(s, PACKET_RX_RING, 4096, 2, 4096, 2, 512));
    show("second ring", ring3(s, PACKET_RX_RING, 4096, 2, 4096, 2, 512));
    show("version while ringed", version(s, TPACKET_V2));
    show("ring down", ring3(s, PACKET_RX_RING, 0, 0, 0, 0, 0));
    show("version after", version(s, TPACKET_V2));
    unsigned reserve = 0x80000000u;
    show("reserve past INT_MAX", setsockopt(s, SOL_PACKET, PACKET_RESERVE, &reserve, sizeof reserve));
    reserve = 4000;
    show("reserve 4000", setsockopt(s, SOL_PACKET, PACKET_RESERVE, &reserve, sizeof reserve));
    show("frame under header and reserve", ring(s, 4096, 1, 4048, 1));
    show("frame over them", ring(s, 8192, 1, 4064, 2));
    len = sizeof reserve;
    getsockopt(s, SOL_PACKET, PACKET_RESERVE, &reserve, &len);
    printf("reserve %u\n", reserve);
    struct sockaddr_ll name;
    len = sizeof name;
    getsockname(s, (struct sockaddr *)&name, &len);
    printf("unbound: len %u family %d protocol %#x index %d\n", len, name.sll_family, ntohs(name.sll_protocol), name.sll_ifindex);
    show("send unbound", send(s, "x", 1, 0));
    struct sockaddr_ll nowhere = {.sll_family = AF_PACKET, .sll_halen = 6};
    show("send to a short address", sendto(s, "x", 1, 0, (struct sockaddr *)&nowhere, 10));
    show("send to an address under its halen", sendto(s, "x", 1, 0, (struct sockaddr *)&nowhere, 14));
    show("send to no link", sendto(s, "x", 1, 0, (struct sockaddr *)&nowhere, sizeof nowhere));
    struct sockaddr_ll to = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL), .sll_ifindex = 99999};
    show("bind to no link", bind(s, (struct sockaddr *)&to, sizeof to));
    to.sll_ifindex = 1;
    show("bind to lo", bind(s, (struct sockaddr *)&to, sizeof to));
    len = sizeof name;
    getsockname(s, (struct sockaddr *)&name, &len);
    printf("bound: len %u index %d hatype %d halen %d\n", len, name.sll_ifindex, name.sll_hatype, name.sll_halen);
    show("connect", connect(s, (struct sockaddr *)&to, sizeof to));
    show("listen", listen(s, 1));
    seteuid(65534);
    show("raw as nobody", socket(AF_PACKET, SOCK_DGRAM, 0));
    return 0;
}
"""
EXPECTED = """stream: Socket type not supported
raw: ok
version 3: Invalid argument
version V3: ok
V3 header 48
V1 header 32
header of version 7: Invalid argument
V3 tx ring: Invalid argument
huge private area: Invalid argument
frames mismatch: Invalid argument
unaligned frame: Invalid argument
block not a page: Invalid argument
good ring: ok
second ring: Device or resource busy
version while ringed: Device or resource busy
ring down: ok
version after: ok
reserve past INT_MAX: Invalid argument
reserve 4000: ok
frame under header and reserve: Invalid argument
frame over them: ok
reserve 4000
unbound: len 12 family 17 protocol 0x3 index 0
send unbound: No such device or address
send to a short address: Invalid argument
send to an address under its halen: Invalid argument
send to no link: No such device or address
bind to no link: No such device
bind to lo: ok
bound: len 18 index 1 hatype 772 halen 6
connect: Operation not supported
listen: Operation not supported
raw as nobody: Operation not permitted
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "packet_socket", PROGRAM, arch=request.param)


def test_packet_socket_options_and_rings(program):
    native = subprocess.run([str(program)], capture_output=True, check=True, text=True)
    assert native.stdout == EXPECTED
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout.decode() == EXPECTED, result.describe()
