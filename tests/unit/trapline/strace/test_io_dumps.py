"""strace's -e read=/write= dumps (trapline/strace/io_dumps.py): descriptor sets, the rows'
layout (strace 6.1's dumpstr, checked line for line against strace in
tests/e2e/strace/test_flags_against_strace.py) and what each call dumps."""
import pytest
from hypothesis import given
from hypothesis import strategies as st

from trapline.strace.io_dumps import FdSet, dump_lines, hex_rows, parse_fd_set
from tests.unit.trapline.strace.fake_memory import FakeMemory


def test_descriptor_sets():
    assert 3 in parse_fd_set("1,3") and 2 not in parse_fd_set("1,3")
    assert 2 in parse_fd_set("!1") and 1 not in parse_fd_set("!1")
    assert 99 in parse_fd_set("all") and 0 not in parse_fd_set("none")
    assert 5 not in parse_fd_set("!all")
    with pytest.raises(ValueError, match="invalid descriptor 'x'"):
        parse_fd_set("x")


def test_a_row_as_strace_prints_it():
    assert hex_rows(b"open data.txt: ok") == [
        " | 00000  6f 70 65 6e 20 64 61 74  61 2e 74 78 74 3a 20 6f  open data.txt: o |",
        " | 00010  6b                                                k                |"]


@given(st.binary(max_size=100))
def test_the_rows_hold_the_data_in_hex_and_as_text(data):
    rows = hex_rows(data)
    assert len(rows) == (len(data) + 15) // 16
    assert all(len(row) == 78 and row.endswith(" |") for row in rows)
    cells = "".join(row[10:59] for row in rows).split()
    assert bytes(int(cell, 16) for cell in cells) == data
    text = "".join(chr(b) if 0x20 <= b < 0x7f else "." for b in data)
    assert "".join(row[60:76] for row in rows) == text.ljust(16 * len(rows))

def test_what_each_call_dumps():
    mem = FakeMemory({0x1000: b"hello", 0x2000: (0x1000).to_bytes(8, "little") + (2).to_bytes(8, "little")
                      + (0x1002).to_bytes(8, "little") + (3).to_bytes(8, "little")})
    everything = FdSet(negated=True)
    assert dump_lines(mem, "write", [1, 0x1000, 5], -32, 8, FdSet(), everything) == hex_rows(b"hello")
    assert dump_lines(mem, "read", [1, 0x1000, 5], -11, 8, everything, everything) == []
    assert dump_lines(mem, "read", [1, 0x1000, 5], 3, 8, everything, FdSet()) == hex_rows(b"hel")
    assert dump_lines(mem, "readv", [1, 0x2000, 2], 3, 8, everything, FdSet()) == [
        " * 2 bytes in buffer 0", *hex_rows(b"he"), " * 1 bytes in buffer 1", *hex_rows(b"l")]
    assert dump_lines(mem, "close", [1], 0, 8, everything, everything) == []
