"""The remote protocol's framing (trapline/gdbserver/packets.py): checksums, escapes, acks,
interrupts, packets split across reads, and a corrupted packet."""
from hypothesis import given
from hypothesis import strategies as st

from trapline.gdbserver.packets import PacketParser, checksum, escape, frame, unescape


def test_frame_is_dollar_payload_hash_two_hex_digits():
    # The GDB manual's own example: "$g#67" (0x67 = ord('g')).
    assert frame(b"g") == b"$g#67"
    assert frame(b"") == b"$#00"
    assert frame(b"OK") == b"$OK#9a"


def test_checksum_is_the_byte_sum_modulo_256():
    assert checksum(bytes([0xFF, 0x02])) == 0x01


def test_escape_uses_brace_and_xor_0x20_for_the_four_special_bytes():
    assert escape(b"a#b$c}d*e") == b"a}\x03b}\x04c}]d}\x0ae"
    assert unescape(b"a}\x03b}\x04c}]d}\x0ae") == b"a#b$c}d*e"


@given(st.binary(max_size=300))
def test_escape_round_trips_and_leaves_no_special_byte(data):
    escaped = escape(data)
    assert unescape(escaped) == data
    assert not set(escaped) & set(b"#$*")


def test_parser_reports_acks_packets_and_interrupts_in_order():
    parser = PacketParser()
    events = parser.feed(b"+$qSupported:multiprocess+#" + b"%02x" % checksum(b"qSupported:multiprocess+")
                         + b"\x03-")
    assert events == [("ack",), ("packet", b"qSupported:multiprocess+"), ("interrupt",), ("nack",)]


def test_parser_keeps_a_packet_split_across_reads():
    parser = PacketParser()
    whole = frame(b"m10027e0,3")
    seen = []
    for i in range(len(whole)):
        seen += parser.feed(whole[i:i + 1])
    assert seen == [("packet", b"m10027e0,3")]


def test_a_wrong_checksum_is_reported_as_bad():
    assert PacketParser().feed(b"$g#00") == [("bad", b"g")]


def test_an_interrupt_byte_inside_a_packet_is_data():
    payload = b"X1000,1:\x03"
    assert PacketParser().feed(frame(payload)) == [("packet", payload)]


@given(st.lists(st.binary(max_size=40).map(escape), max_size=8), st.integers(1, 7))
def test_any_stream_of_escaped_packets_parses_back_whatever_the_read_sizes(payloads, step):
    stream = b"".join(frame(p) for p in payloads)
    parser = PacketParser()
    events = []
    for i in range(0, len(stream), step):
        events += parser.feed(stream[i:i + step])
    assert events == [("packet", p) for p in payloads]
