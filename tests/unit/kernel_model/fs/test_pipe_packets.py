"""Packet-mode pipes (pipe2 with O_DIRECT; LTP pipe2_01 got EINVAL): a write is cut into
packets of at most PIPE_BUF bytes and a read takes at most one, dropping what it leaves of it
(fs/pipe.c PIPE_BUF_FLAG_PACKET)."""
from hypothesis import given, strategies as st

from kernel_model.fs.constants import O_DIRECT
from kernel_model.fs.pipe import PIPE_BUF, Pipe


def _packet_pipe():
    pipe = Pipe(lambda channel: None, 1)
    reader, writer = pipe.read_end(), pipe.write_end()
    writer.flags |= O_DIRECT
    return reader, writer


def test_a_read_takes_one_packet_and_drops_its_rest():
    reader, writer = _packet_pipe()
    assert writer.write(b"abcdef") == 6 and writer.write(b"gh") == 2
    assert reader.read(4) == b"abcd"
    assert reader.read(100) == b"gh"
    assert reader.pipe.buffered == 0


def test_a_long_write_is_cut_into_page_sized_packets():
    reader, writer = _packet_pipe()
    writer.write(b"x" * PIPE_BUF + b"y" * 10)
    assert reader.read(2 * PIPE_BUF) == b"x" * PIPE_BUF
    assert reader.read(2 * PIPE_BUF) == b"y" * 10


@given(st.lists(st.binary(min_size=1, max_size=3 * PIPE_BUF), min_size=1, max_size=5),
       st.integers(1, 2 * PIPE_BUF))
def test_reads_return_the_packets_in_order(writes, size):
    """Each read returns the next packet's first `size` bytes, whatever the writes were (at
    most 5 writes of 3 pages: they fit in the pipe's 16 pages)."""
    reader, writer = _packet_pipe()
    packets = []
    for data in writes:
        count = writer.write(data)
        packets += [data[at:min(at + PIPE_BUF, count)] for at in range(0, count, PIPE_BUF)]
    assert packets
    assert [reader.read(size) for _ in packets] == [packet[:size] for packet in packets]
    assert reader.pipe.buffered == 0
