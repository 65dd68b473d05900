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


def test_written_pages_are_data_and_the_rest_holes():
    """lseek11's layout: data at pages 0, 10 and 20 of a 30-page file, and at its last bytes."""
    data, page = SparseData(), 4096
    data.truncate(30 * page)
    for at in (0, 10 * page, 20 * page, 30 * page - 128):
        data.write(at, b"data01suffix")
    assert data.next_data(4) == 4 and data.next_hole(4) == page
    assert data.next_data(page + 128) == 10 * page and data.next_hole(page + 128) == page + 128
    assert data.next_data(21 * page) == 29 * page and data.next_hole(29 * page) == 30 * page
    data.truncate(15 * page + 1)                  # page 15 keeps its first byte: still a page
    assert data.next_data(11 * page) is None and data.next_hole(10 * page) == 11 * page


@given(st.lists(st.tuples(st.sampled_from(["write", "truncate"]), st.integers(0, 3 * CHUNK),
                          st.integers(1, 9000)), max_size=12),
       st.lists(st.integers(0, 3 * CHUNK), min_size=1, max_size=8))
def test_seek_data_and_hole_follow_the_pages_written_and_not_cut(ops, offsets):
    """Against a set of page numbers: a write adds the pages it touches, a truncate drops the
    pages wholly past the new end; SEEK_DATA finds the first such page at or after the offset,
    SEEK_HOLE the first other one, both within the size."""
    data, pages, page = SparseData(), set(), 4096
    for op, offset, length in ops:
        if op == "write":
            data.write(offset, bytes(length))
            pages |= set(range(offset // page, (offset + length - 1) // page + 1))
        else:
            data.truncate(offset)
            pages = {p for p in pages if p * page < offset}
    size = len(data)
    for offset in offsets:
        if offset >= size:
            continue
        after = [max(p * page, offset) for p in sorted(pages) if (p + 1) * page > offset]
        assert data.next_data(offset) == (after[0] if after else None)
        first_hole = next(p for p in range(offset // page, size // page + 2) if p not in pages)
        hole = min(max(first_hole * page, offset), size)
        assert data.next_hole(offset) == hole
