"""SO_NO_CHECK (net/core/sock.c sk_setsockopt: sk->sk_no_check_tx = valbool; LTP setsockopt05
sets it on a UDP socket and broke with ENOPROTOOPT): any int is taken as a flag, and
getsockopt reads the flag back, 0 or 1."""
import struct

from kernel_model.net.constants import SO_NO_CHECK
from kernel_model.net.options import SocketOptions


def test_no_check_is_a_flag():
    options = SocketOptions()
    assert options.get(SO_NO_CHECK, 8) == struct.pack("<i", 0)
    options.set(SO_NO_CHECK, struct.pack("<i", 5))
    assert options.get(SO_NO_CHECK, 8) == struct.pack("<i", 1)
    options.set(SO_NO_CHECK, struct.pack("<i", 0))
    assert options.get(SO_NO_CHECK, 8) == struct.pack("<i", 0)
