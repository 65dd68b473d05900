"""Internet checksums (kernel_model/net/ip_packet.py, RFC 1071): a header the kernel builds
or completes carries a checksum that makes its own sum check, and arrives valid."""
from hypothesis import given, strategies as st

from kernel_model.net.ip_packet import (checksum, complete_user_header, ipv4_header,
                                        valid_on_arrival, with_checksum)

byte = st.integers(0, 255)
host = st.binary(min_size=4, max_size=4)


@given(st.binary(min_size=4, max_size=200), st.data())
def test_data_with_its_checksum_sums_to_zero(data, draw):
    at = draw.draw(st.integers(0, (len(data) - 2) // 2)) * 2
    assert checksum(with_checksum(data, at)) == 0


@given(st.integers(0, 65515), byte, byte, byte, host, host)
def test_a_built_header_arrives_valid(length, tos, ttl, protocol, source, destination):
    packet = ipv4_header(length, tos=tos, ident=0, frag=0x4000, ttl=ttl, protocol=protocol,
                         source=source, destination=destination) + bytes(length)
    assert valid_on_arrival(packet)


@given(st.binary(min_size=20, max_size=300).map(lambda d: bytes([0x45]) + d[1:]), host)
def test_a_version_4_header_of_20_bytes_is_completed_and_valid(data, source):
    assert valid_on_arrival(complete_user_header(data, source))
