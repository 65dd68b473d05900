"""kernel_model/net/truesize.py against the reference host: SIOCOUTQ (the sender's
sk_wmem_alloc) after one send of N bytes on a fresh AF_UNIX stream socketpair (Linux 6.x)."""
import pytest

from kernel_model.net.constants import WMEM_DEFAULT
from kernel_model.net.truesize import stream_skb

MEASURED = {1: 768, 64: 768, 100: 768, 200: 1280, 512: 1280, 1000: 2304, 1024: 2304,
            2000: 4352, 3776: 4352, 3777: 4864, 4096: 4864, 5000: 6400, 8192: 8960,
            16384: 17152, 32768: 33536, 36544: 37120, 36545: 37888, 40000: 41472,
            65536: 67072, 106432: 108288, 200000: 204288}


@pytest.mark.parametrize("length, truesize", sorted(MEASURED.items()))
def test_a_sends_pieces_cost_what_linux_charges(length, truesize):
    left, charged, pieces = length, 0, 0
    while left:
        size, cost = stream_skb(left, WMEM_DEFAULT)
        assert 0 < size <= left
        left, charged, pieces = left - size, charged + cost, pieces + 1
    assert charged == truesize


def test_a_small_send_buffer_cuts_smaller_pieces():
    """(sk_sndbuf >> 1) - 64: with SO_SNDBUF 4608 (the floor) a piece holds 2240 bytes."""
    assert stream_skb(10_000, 4608)[0] == 2240
