"""trace's jsonl lines are json.dumps of the record's dict, byte for byte, whichever way they
are written (trapline/tracing.py format_jsonl writes plain uprobe records without the
encoder); and a StreamSink that batches its lines writes the same bytes as one that writes
each record at once (issue 31)."""
import io
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from instrumenter.probes.records import Record
from trapline.tracing import StreamSink, _field_text, format_jsonl, format_text

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
