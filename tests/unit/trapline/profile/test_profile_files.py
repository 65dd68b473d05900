"""trapline/profile: the tprof counts, the folded/speedscope/Chrome files and the recorded trace
of a profile built from known samples."""
import json

import pytest

from instrumenter.profiler.sampler import ModuleLoad, Sample
from instrumenter.profiler.symbolize import Frame
from trapline.errors import UsageError
from trapline.profile.exporters import chrome_trace, folded_text, speedscope
from trapline.profile.model import Profile
from trapline.profile.record import TraceWriter, read_trace


def _f(name, module="prog"):
    return Frame(module, name, 4, 0x1000)


def _profile():
    p = Profile(interval=1000, mode="stack", command=["prog"])
    p.add_module(ModuleLoad(0, 7, "/bin/prog", 0x1000, 0x2000))
    leaf = (_f("leaf"), _f("inner"), _f("main"))
    p.add(Sample(1000, 7, 7, "prog", leaf, None))
    p.add(Sample(2000, 7, 7, "prog", leaf, None))
    p.add(Sample(3000, 7, 8, "prog", (_f("memcpy", "libc.so.6"), _f("leaf"), _f("leaf"), _f("main")), None))
    p.add(Sample(4000, 7, 8, "prog", (_f("x"),), "no CFI at 0x1"))
    return p


def test_self_and_total_counts():
    p = _profile()
    assert p.self_by_function()[("prog", "leaf")] == 2
    assert p.total_by_function()[("prog", "leaf")] == 3          # once per sample, recursion or not
    assert p.by_module() == {"prog": 3, "libc.so.6": 1}
    assert p.by_thread() == {(7, 7, "prog"): 2, (7, 8, "prog"): 2}
    assert p.truncated() == {"no CFI at 0x1": 1}


def test_folded_stacks():
    assert folded_text(_profile()).splitlines() == [
        "prog;[truncated];x 1", "prog;main;inner;leaf 2", "prog;main;leaf;leaf;memcpy 1"]


def test_speedscope_profiles_per_thread():
    doc = speedscope(_profile(), "prog")
    frames = [f["name"] for f in doc["shared"]["frames"]]
    first, second = doc["profiles"]
    assert [[frames[i] for i in s] for s in first["samples"]] == [["main", "inner", "leaf"]] * 2
    assert first["weights"] == [1000, 1000] and (first["startValue"], first["endValue"]) == (0, 2000)
    assert [frames[i] for i in second["samples"][1]] == ["[truncated]", "x"]


def test_chrome_trace_in_microseconds():
    events = chrome_trace(_profile())["traceEvents"]
    xs = [e for e in events if e["ph"] == "X"]
    assert [(e["ts"], e["dur"], e["tid"]) for e in xs] == [(0.0, 1.0, 7), (1.0, 1.0, 7), (2.0, 1.0, 8), (3.0, 1.0, 8)]
    assert xs[0]["args"]["stack"] == "main;inner;leaf"
    assert [e["name"] for e in events if e["ph"] == "M"] == ["process_name", "thread_name", "thread_name"]


def test_a_recorded_trace_reads_back(tmp_path):
    p = _profile()
    path = tmp_path / "t"
    writer = TraceWriter(str(path), p, buffer_records=2)
    writer.startup([(7, 7, "prog")], p.modules)
    for sample in p.samples:
        writer.sample(sample)
    p.exit_code = 3
    writer.close(p)
    back = read_trace(str(path))
    assert back.samples == p.samples and back.modules == p.modules and back.exit_code == 3
    names = [json.loads(line) for line in path.read_text().splitlines() if '"t":"name"' in line]
    assert len(names) == len({(n["module"], n["function"]) for n in names}) == 5


@pytest.mark.parametrize("text,reason", [("", "no trapline-profile header"),
                                         ('{"t":"header","format":"trapline-profile","version":9}', "version 9"),
                                         ("not json", "JSONDecodeError")])
def test_a_bad_trace_is_one_line(tmp_path, text, reason):
    path = tmp_path / "bad"
    path.write_text(text)
    with pytest.raises(UsageError, match=reason):
        read_trace(str(path))


def test_a_profile_without_samples_says_why_and_draws_nothing(tmp_path):
    """--event faults in a run whose memory is all mapped when asked for: the report says so,
    and no flame graph tool is run on empty stacks (flamegraph.pl fails on them)."""
    from trapline.profile.outputs import write_outputs
    from trapline.profile.report import heading

    empty = Profile(interval=1, mode="stack", event="faults", command=["prog"])
    text = heading(empty)
    assert "no sample: the run had fewer than 1 page faults" in text and "become signals" in text
    assert "no sample" not in heading(_profile())
    notes = write_outputs(empty, str(tmp_path), "prog")
    assert notes[-1] == "no flame graph: no samples to draw"
