"""SparseData: holes read as zeros and cost nothing, as in a tmpfs file (mm/shmem.c)."""
from hypothesis import given, strategies as st

from kernel_model.fs.sparse import CHUNK, SparseData


def test_a_huge_truncate_costs_nothing_and_reads_zeros():
    data = SparseData(b"head")
    data.truncate(1 << 40)
    assert len(data) == 1 << 40
    assert data.read(0, 6) == b"head\0\0"
    assert data.read((1 << 40) - 3, 10) == b"\0\0\0"          # short at the end
    assert data.read(1 << 40, 10) == b""
    assert data._chunks.keys() == {0} and len(data._chunks[0]) == 4


def test_a_write_far_past_the_end_leaves_a_hole():
    data = SparseData()
    data.write((1 << 50) + CHUNK - 2, b"abcd")                 # across a chunk boundary
    assert len(data) == (1 << 50) + CHUNK + 2
    assert data.read((1 << 50) + CHUNK - 4, 8) == b"\0\0abcd"
    assert data.read(12345, 3) == b"\0\0\0"


def test_cut_bytes_read_as_zeros_when_the_file_grows_again():
    data = SparseData(bytes(range(200)) * 1000)
    data.truncate(CHUNK + 5)
    data.truncate(3 * CHUNK)
    assert data.read(CHUNK, 10) == (bytes(range(200)) * 1000)[CHUNK:CHUNK + 5] + bytes(5)
    assert data.read(2 * CHUNK, 4) == bytes(4)


@given(st.lists(st.tuples(st.sampled_from(["write", "truncate"]), st.integers(0, 3 * CHUNK),
                          st.binary(max_size=300)), max_size=20))
def test_same_bytes_as_a_flat_bytearray(ops):
    data, flat = SparseData(), bytearray()
    for op, offset, blob in ops:
        if op == "write":
            data.write(offset, blob)
            if blob:
                flat.extend(bytes(max(0, offset - len(flat))))
                flat[offset:offset + len(blob)] = blob
        else:
            data.truncate(offset)
            del flat[offset:]
            flat.extend(bytes(offset - len(flat)))
    assert len(data) == len(flat)
    assert data.read(0, len(flat) + 10) == bytes(flat)
