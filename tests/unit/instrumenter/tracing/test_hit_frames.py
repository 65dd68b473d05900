"""The Python frames of a trampoline probe's hit that writes a record (issue 31: the frames of
the hit path were most of a record's cost, bench/trace_cost.py). Counted exactly with a
profile function over the run: the same run probing fib (465 hits for fib 12) and probing
main (one hit), after a warm-up run (imports made, native hooks built); the difference over
the hits more is what one hit runs in Python. Before the door ran the trampoline's hooks
itself and the clock was read in one call, an x86-64 hit ran 9 frames (the interrupt hook,
the dispatcher's redirect, the door's stand-in, the trampoline's redirect, the entry hook,
three frames of the clock, the sink's put_row), an i386 one 15 (six more read its arguments,
stack words); then 6 and 12; since the Machine's C interrupt hook takes a site's int3
(emu/int3_sites.py: no Python interrupt hook, redirect or stand-in in between), 4 and 12;
since that hook reads the clock for the record's ts (emu/clock_parts.py), 3 and 11."""
import io
import json
import sys
from pathlib import Path

import pytest

from trapline import Sandbox
from trapline.tracing import StreamSink

SAMPLES = Path(__file__).resolve().parents[4] / "samples" / "bin"


def _frames_and_lines(arch: str, function: str) -> tuple[int, int, str]:
    """(Python calls made during the run, records written, the records' text) of `fib 12`
    traced by a jsonl sink with the probe on `function` (trapline trace -o FILE's sink)."""
    fib = str(SAMPLES / arch / "fib")
    out = io.StringIO()
    sink = StreamSink(out, "jsonl", batch=StreamSink.BATCH)
    calls = [0]

    def profile(_frame, event, _arg):
        if event == "call":
            calls[0] += 1
    sandbox = Sandbox(probes=[f"uprobe:{fib}:{function}"], strategy="trampoline", sink=sink)
    sys.setprofile(profile)
    try:
        result = sandbox.run([fib, "12"])
    finally:
        sys.setprofile(None)
    assert result.exit_code == 0
    text = out.getvalue()
    return calls[0], text.count("\n"), text


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_a_recorded_trampoline_hit_runs_few_python_frames(arch):
    _frames_and_lines(arch, "fib")                    # imports, native hooks built: warm
    hot, hot_lines, text = _frames_and_lines(arch, "fib")
    cold, cold_lines, _ = _frames_and_lines(arch, "main")
    assert (hot_lines, cold_lines) == (465, 1)          # every hit recorded, with its ts
    assert '"args":[12,' in text.splitlines()[0] or arch == "i386"
    per_hit = (hot - cold) / (hot_lines - cold_lines)
    # x86-64: 8.9, then 5.9, 3.9, now 2.9; i386: 16.9, then 13.9, 11.9, now 10.9 (a frame
    # or two of a run differ between the hot and the cold run: not whole numbers)
    assert per_hit < (3.5 if arch == "x86_64" else 11.5), per_hit


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
@pytest.mark.parametrize("strategy", ["trampoline", "jump"])
def test_an_entry_hit_s_row_is_written_as_a_plain_one(arch, strategy, monkeypatch):
    """The entry hook's rows go through put_plain_row: a batch of them alone is written
    without asking each row's types (trapline/tracing.py plain_jsonl_lines), the same lines."""
    from trapline import tracing
    fib = str(SAMPLES / arch / "fib")
    asked = []
    original = tracing.jsonl_lines
    monkeypatch.setitem(tracing.ROW_FORMATTERS, "jsonl",
                        lambda rows: asked.append(len(rows)) or original(rows))
    out = io.StringIO()
    sink = StreamSink(out, "jsonl", batch=StreamSink.BATCH)
    result = Sandbox(probes=[f"uprobe:{fib}:fib"], strategy=strategy, sink=sink).run([fib, "12"])
    sink.flush()
    lines = out.getvalue().splitlines()
    assert result.exit_code == 0 and len(lines) == 465 and asked == []
    first = json.loads(lines[0])
    assert first["probe"] == f"uprobe:{fib}:fib" and first["retval"] is None
    assert (first["args"][0] == 12) if arch == "x86_64" else len(first["args"]) == 6
