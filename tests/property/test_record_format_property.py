"""trace's jsonl lines are json.dumps of the record's dict, byte for byte, whichever way they
are written (trapline/tracing.py format_jsonl writes plain uprobe records without the
encoder, jsonl_lines and text_lines write buffered rows without a Record); and a StreamSink
that batches its lines, or takes rows, writes the same bytes as one that writes each record
at once (issue 31)."""
import io
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from instrumenter.probes.records import Buffers, Record
from trapline import tracing
from trapline.tracing import (FORMATTERS, ROW_FORMATTERS, StreamSink, _field_text, format_jsonl,
                              format_text)

_words = st.integers(min_value=-(1 << 63), max_value=(1 << 64) - 1)
_texts = st.text(max_size=30)
_fields = st.lists(st.tuples(st.sampled_from(["code", "child_pid", "argv", "signal"]),
                             st.one_of(_words, _texts, st.lists(_texts, max_size=3))),
                   max_size=3, unique_by=lambda f: f[0]).map(tuple)
_records = st.builds(Record, ts=st.integers(0, 1 << 62), pid=st.integers(1, 1 << 22),
                     tid=st.integers(1, 1 << 22), probe=_texts, addr=_words,
                     args=st.lists(_words, max_size=6).map(tuple),
                     retval=st.one_of(st.none(), _words),
                     kind=st.sampled_from(["entry", "return", "syscall_exit", "proc"]),
                     name=_texts, fields=st.one_of(st.just(()), _fields))


def _encoder_line(record) -> str:
    return json.dumps(record.as_json(), separators=(",", ":"))


@settings(max_examples=300, deadline=None)
@given(record=_records)
def test_a_jsonl_line_is_the_encoders_line(record):
    assert format_jsonl(record) == _encoder_line(record)


def test_the_plain_record_of_a_uprobe_hit_takes_the_fast_path(monkeypatch):
    """Not vacuous: the property's records include the ones written without the encoder."""
    record = Record(765, 100, 100, 'uprobe:/a "b"\\c:fib', 0x1002000, (3, 0, 1 << 63), None,
                    "entry", "fib")
    expected = _encoder_line(record)
    monkeypatch.setattr(json, "dumps", lambda *a, **k: (_ for _ in ()).throw(AssertionError))
    import trapline.tracing as tracing
    tracing._JSON_STRINGS[record.probe] = json.JSONEncoder().encode(record.probe)
    assert format_jsonl(record) == expected


@settings(max_examples=60, deadline=None)
@given(records=st.lists(_records, max_size=40), batch=st.integers(1, 7),
       fmt=st.sampled_from(["text", "jsonl"]))
def test_a_batching_sink_writes_what_a_streaming_one_writes(records, batch, fmt):
    streamed, batched = io.StringIO(), io.StringIO()
    one, many = StreamSink(streamed, fmt), StreamSink(batched, fmt, batch=batch)
    for record in records:                   # the session drains one record at a time
        one([record])
        many([record])
    many.flush()
    assert batched.getvalue() == streamed.getvalue()


def _text_by_parts(record) -> str:
    """The text line as trace wrote it until 2026-11-28, part by part (the reference)."""
    parts = [f"{record.ts:>14}", f"{record.pid:>6}", f"{record.tid:>6}", record.probe]
    if record.kind in ("entry", "return"):
        parts.append(record.name)
    if record.kind == "profile":
        parts.append(record.name)
        if record.args:
            parts.append("stack=" + ",".join(f"{a:#x}" for a in record.args))
    elif record.args:
        parts.append("args=" + ",".join(f"{a:#x}" for a in record.args))
    if record.retval is not None:
        parts.append(f"retval={record.retval}")
    parts += [f"{key}={_field_text(value)}" for key, value in record.fields]
    return " ".join(parts)


@settings(max_examples=300, deadline=None)
@given(record=_records.map(lambda r: r), profile=st.booleans())
def test_a_text_line_is_the_parts_joined(record, profile):
    if profile:
        record.kind = "profile"
    assert format_text(record) == _text_by_parts(record)


def _row(record) -> tuple:
    """The row a session buffers for `record`: its fields in order, a hit's 9 without fields."""
    row = (record.ts, record.pid, record.tid, record.probe, record.addr, record.args,
           record.retval, record.kind, record.name)
    return row + (record.fields,) if record.fields else row


# Rows as the session makes them, and rows the fast paths must hand back to the Record's
# formatter: arguments that are not ints (JSON writes a bool as true), fields.
_odd_args = st.lists(st.one_of(_words, st.booleans()), max_size=6).map(tuple)
_rows = st.one_of(_records, st.builds(Record, ts=st.integers(0, 1 << 62), pid=st.integers(1, 99),
                                      tid=st.integers(1, 99), probe=_texts, addr=_words,
                                      args=_odd_args, kind=st.just("entry"), name=_texts))


@settings(max_examples=300, deadline=None)
@given(records=st.lists(_rows, max_size=12), fmt=st.sampled_from(["text", "jsonl"]))
def test_the_lines_of_rows_are_the_records_lines(records, fmt):
    lines = ROW_FORMATTERS[fmt]([_row(r) for r in records])
    assert lines == [FORMATTERS[fmt](r) for r in records]


def test_plain_rows_take_the_fast_path(monkeypatch):
    """Not vacuous: the rows of uprobe hits (and returns) are written without a Record, and
    a probe spec holding a % is not a format directive of the jsonl template."""
    rows = [(765, 100, 101, 'uprobe:/a "b%d"\\c:fib', 0x1002000, (3, 0, 1 << 63), None, "entry", "fib"),
            (766, 100, 101, 'uprobe:/a "b%d"\\c:fib', 0x1002000, (), None, "entry", "fib"),
            (800, 100, 101, "uretprobe:/a:fib%s", 0x1002000, (), -5, "return", "fib")]
    expected = {fmt: [FORMATTERS[fmt](Record(*row)) for row in rows] for fmt in FORMATTERS}

    def refuse(record):
        raise AssertionError(f"a plain row went through the Record: {record}")
    monkeypatch.setattr(tracing, "format_jsonl", refuse)
    monkeypatch.setattr(tracing, "format_text", refuse)
    for fmt, lines_of in ROW_FORMATTERS.items():
        assert lines_of(rows) == expected[fmt]


@settings(max_examples=60, deadline=None)
@given(records=st.lists(_rows, max_size=40), batch=st.integers(1, 7),
       fmt=st.sampled_from(["text", "jsonl"]), as_rows=st.lists(st.booleans(), min_size=40, max_size=40))
def test_a_sink_taking_rows_writes_what_one_taking_records_writes(records, batch, fmt, as_rows):
    """Rows through put_row and Records through a call, mixed in one run, keep their order."""
    streamed, batched = io.StringIO(), io.StringIO()
    one, many = StreamSink(streamed, fmt), StreamSink(batched, fmt, batch=batch)
    for record, row_wise in zip(records, as_rows):
        one([record])
        if row_wise:
            many.put_row(_row(record))
        else:
            many([record])
    many.flush()
    assert batched.getvalue() == streamed.getvalue()


def test_streaming_buffers_hand_rows_to_a_sink_that_takes_them():
    """Buffers of capacity 1 put each row straight into the sink, in the order of the run (one
    list for every process: the lines keep the order of the hits); a drain of Records still
    gets Records."""
    out = io.StringIO()
    sink = StreamSink(out, "jsonl", batch=3)
    buffers = Buffers(capacity=1, drain=sink)
    rows = [(1, 100, 100, "p", 1, (), None, "entry", "f"), (2, 200, 200, "p", 1, (7,), None, "entry", "f"),
            (3, 100, 100, "p", 1, (), None, "entry", "f")]
    for row in rows[:2]:
        buffers.put(row)
    assert out.getvalue() == ""                      # kept for one write of 3
    buffers.put(rows[2])
    assert out.getvalue().splitlines() == [format_jsonl(Record(*row)) for row in rows]
    assert buffers.dropped() == {}
    drained = []
    plain = Buffers(capacity=1, drain=drained.extend)
    plain.put(rows[1])
    assert drained == [Record(*rows[1])]


# ---- plain rows (StreamSink.put_plain_row: a uprobe entry hook's, issue 31) -----------------
_plain_records = st.builds(Record, ts=st.integers(0, 1 << 62), pid=st.integers(1, 1 << 22),
                           tid=st.integers(1, 1 << 22), probe=_texts, addr=_words,
                           args=st.lists(_words, max_size=6).map(tuple),
                           retval=st.one_of(st.none(), _words),
                           kind=st.sampled_from(["entry", "return"]), name=_texts)


@settings(max_examples=300, deadline=None)
@given(records=st.lists(_plain_records, max_size=12), fmt=st.sampled_from(["text", "jsonl"]))
def test_the_lines_of_plain_rows_are_the_records_lines(records, fmt):
    assert tracing.PLAIN_ROW_FORMATTERS[fmt]([_row(r) for r in records]) == \
        [FORMATTERS[fmt](r) for r in records]


@settings(max_examples=80, deadline=None)
@given(records=st.lists(st.one_of(_plain_records, _rows), max_size=40), batch=st.integers(1, 7),
       fmt=st.sampled_from(["text", "jsonl"]), ways=st.lists(st.sampled_from(["row", "plain", "call"]),
                                                            min_size=40, max_size=40))
def test_a_sink_taking_plain_rows_writes_what_one_taking_records_writes(records, batch, fmt, ways):
    """Plain rows through put_plain_row, mixed with other rows and Records in one batch or
    not, are written as the Records are, in order."""
    streamed, batched = io.StringIO(), io.StringIO()
    one, many = StreamSink(streamed, fmt), StreamSink(batched, fmt, batch=batch)
    for record, way in zip(records, ways):
        one([record])
        plain = not record.fields and all(type(a) is int for a in record.args) \
            and record.kind in ("entry", "return")
        if way == "plain" and plain:
            many.put_plain_row(_row(record))
        elif way == "call":
            many([record])
        else:
            many.put_row(_row(record))
    many.flush()
    assert batched.getvalue() == streamed.getvalue()


def test_a_batch_of_plain_rows_is_written_without_a_question_per_row(monkeypatch):
    """Not vacuous: plain rows alone take plain_jsonl_lines; one other row in the batch and
    the whole batch is asked row by row."""
    rows = [(765 + i, 100, 101, "uprobe:/a:fib", 0x1002000, (i, 0, 1 << 63), None, "entry", "fib")
            for i in range(5)]
    asked = []
    original = tracing.jsonl_lines
    monkeypatch.setitem(tracing.ROW_FORMATTERS, "jsonl",
                        lambda batch: asked.append(len(batch)) or original(batch))
    original_text = tracing.text_lines
    monkeypatch.setitem(tracing.ROW_FORMATTERS, "text",
                        lambda batch: asked.append(len(batch)) or original_text(batch))
    for fmt in ("jsonl", "text"):
        out = io.StringIO()
        sink = StreamSink(out, fmt, batch=100)
        for row in rows:
            sink.put_plain_row(row)
        sink.flush()
        assert out.getvalue().splitlines() == [FORMATTERS[fmt](Record(*row)) for row in rows]
        assert asked == []
    for fmt in ("jsonl", "text"):
        sink = StreamSink(io.StringIO(), fmt, batch=100)
        sink.put_plain_row(rows[0])
        sink.put_row(rows[1])
        sink.flush()
    assert asked == [2, 2]


def test_buffers_hand_plain_rows_to_a_sink_that_takes_them():
    """Streaming Buffers give put_plain as the sink's put_plain_row; collecting ones (and a
    sink without it) as their put."""
    sink = StreamSink(io.StringIO(), "jsonl", batch=3)
    assert Buffers(capacity=1, drain=sink).put_plain == sink.put_plain_row
    collecting = Buffers(capacity=8, drain=lambda records: None)
    assert collecting.put_plain == collecting.put
    rows_only = type("RowsOnly", (), {"put_row": lambda self, row: None})()
    assert Buffers(capacity=1, drain=rows_only).put_plain == rows_only.put_row
