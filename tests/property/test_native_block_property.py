"""A block of native records made at once (trapline/native_lines.py) is, byte for byte, the
lines the row formatters make of the same records one by one (trapline/tracing.py
jsonl_lines, text_lines), and a StreamSink that takes a block after single rows writes what
it writes when every record comes as a row (issue 31, the rate
of records through jump)."""
import io

from hypothesis import given, settings
from hypothesis import strategies as st

from trapline.native_lines import BLOCK_FORMATTERS
from trapline.tracing import ROW_FORMATTERS, StreamSink

_unsigned = st.one_of(st.integers(0, (1 << 32) - 1), st.integers(0, (1 << 64) - 1))
# Every probe and name holds a '%' (not a directive of the block's format) and may hold what
# JSON escapes: the interesting texts are always there.
_with_percent = st.builds(lambda a, b: f"{a}%{b}", st.text(max_size=12), st.text(max_size=12))


@st.composite
def _blocks(draw):
    nargs, count = draw(st.integers(0, 6)), draw(st.integers(1, 40))
    return {"ts": draw(st.integers(0, 1 << 62)), "pid": draw(st.integers(1, 1 << 22)),
            "tid": draw(st.integers(0, 1 << 22)), "probe": draw(_with_percent),
            "addr": draw(_unsigned), "name": draw(_with_percent),
            "words": tuple(draw(st.lists(_unsigned, min_size=nargs * count, max_size=nargs * count))),
            "count": count}


def _rows(block) -> list[tuple]:
    """The rows the collector made of the block one record at a time (native_collector.py)."""
    words, count = block["words"], block["count"]
    n = len(words) // count
    return [(block["ts"], block["pid"], block["tid"], block["probe"], block["addr"],
             words[i * n:(i + 1) * n], None, "entry", block["name"]) for i in range(count)]


@settings(max_examples=300, deadline=None)
@given(block=_blocks(), fmt=st.sampled_from(["text", "jsonl"]))
def test_a_block_is_the_rows_lines(block, fmt):
    expected = "".join(line + "\n" for line in ROW_FORMATTERS[fmt](_rows(block)))
    assert BLOCK_FORMATTERS[fmt](**block) == expected


@settings(max_examples=100, deadline=None)
@given(before=_blocks(), block=_blocks(), batch=st.integers(1, 50), fmt=st.sampled_from(["text", "jsonl"]))
def test_a_block_after_rows_keeps_their_order(before, block, batch, fmt):
    """Rows kept by a batching sink are written before the block that follows them."""
    by_rows, by_block = io.StringIO(), io.StringIO()
    one, other = StreamSink(by_rows, fmt, batch=batch), StreamSink(by_block, fmt, batch=batch)
    for row in _rows(before) + _rows(block):
        one.put_row(row)
    one.flush()
    for row in _rows(before):
        other.put_row(row)
    other.put_block(**block)
    other.flush()
    assert by_block.getvalue() == by_rows.getvalue()
