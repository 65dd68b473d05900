"""An address seen from the other family (inet_address.in_family): IPv4 addresses and their
v4-mapped IPv6 forms (::ffff:a.b.c.d) stand for each other, and nothing else changes."""
from hypothesis import given, strategies as st

from kernel_model.net.constants import AF_INET, AF_INET6
from kernel_model.net.inet_address import InetName, in_family, is_v4_mapped

ports = st.integers(0, 65535)


@given(st.binary(min_size=4, max_size=4), ports)
def test_an_ipv4_address_round_trips_through_its_mapped_form(host, port):
    name = InetName(AF_INET, host, port)
    mapped = in_family(name, AF_INET6)
    assert is_v4_mapped(mapped) and mapped.host[12:] == host and mapped.port == port
    assert in_family(mapped, AF_INET) == name
    assert in_family(name, AF_INET) == name and in_family(mapped, AF_INET6) == mapped


@given(st.binary(min_size=16, max_size=16), ports)
def test_other_ipv6_addresses_are_not_mapped(host, port):
    name = InetName(AF_INET6, host, port)
    mapped = host[:12] == bytes(10) + b"\xff\xff"
    assert is_v4_mapped(name) == mapped
    if not mapped and any(host):
        assert in_family(name, AF_INET) == name        # no IPv4 form: left as it is
