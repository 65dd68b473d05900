"""`trapline profile` end to end (issue 18): the sampling profiler on samples with a known call
structure (both arches, with and without frame pointers), on Debian's dynamic binaries, and the
files it writes (folded stacks, speedscope JSON validated against speedscope's published schema,
Chrome trace events, the recorded trace read back by `trapline report`)."""
import json
import os
from pathlib import Path

import jsonschema
import pytest

from trapline.profile.exporters import chrome_trace, folded_text, speedscope
from trapline.profile.model import TRUNCATED
from trapline.profile.record import read_trace
from trapline.profile.session import run_profiled
from trapline.sandbox import Sandbox
from tests.e2e.forkserver import run_trapline
from tests.e2e.speedscope_schema import speedscope_schema
from tests.quick_profile import alternates

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT / "samples" / "bin"
CHAIN = ("main", "outer", "middle", "inner", "leaf")

pytestmark = pytest.mark.e2e


@pytest.fixture(params=["i386", "x86_64"])
def arch(request) -> str:
    return request.param


def _profile(argv, interval=2_000, **options):
    return run_profiled(Sandbox(**options), [str(a) for a in argv], interval=interval)



@pytest.mark.parametrize("program", ["callchain", "callchain_nofp"])
@alternates("arch")
def test_the_hot_leaf_is_found_through_three_levels(arch, program):
    run = _profile([SAMPLES / arch / program, "60"], interval=1_000)
    profile = run.profile
    assert run.result.exit_code == 0 and b"leaf=780 " in run.result.stdout
    self_counts = profile.self_by_function()
    (module, hottest), _ = max(self_counts.items(), key=lambda item: item[1])
    assert (module, hottest) == (program, "leaf")
    assert not profile.truncated(), profile.truncated()
    # every sample in leaf reached through outer is the whole chain, from the thread's start
    through_outer = [sample for sample in profile.samples
                     if [f.name for f in sample.frames[:4]] == ["leaf", "inner", "middle", "outer"]]
    assert len(through_outer) > 50
    for sample in through_outer:
        names = [f.name for f in reversed(sample.frames)]
        assert names[names.index("main"):] == list(CHAIN)
        assert sample.truncated is None


def test_pc_mode_records_only_the_pc(arch):
    profile = run_profiled(Sandbox(), [str(SAMPLES / arch / "callchain"), "20"], interval=1_000,
                           mode="pc").profile
    assert profile.samples and all(len(s.frames) == 1 for s in profile.samples)


def test_the_same_run_gives_the_same_files(arch):
    first = _profile([SAMPLES / arch / "callchain", "10"], interval=777).profile
    second = _profile([SAMPLES / arch / "callchain", "10"], interval=777).profile
    assert folded_text(first) == folded_text(second) and first.total > 20
    assert json.dumps(speedscope(first, "x")) == json.dumps(speedscope(second, "x"))


def test_folded_lines_are_comm_root_to_leaf_count():
    profile = _profile([SAMPLES / "x86_64" / "callchain", "30"]).profile
    lines = folded_text(profile).splitlines()
    counts = {line.rsplit(" ", 1)[0]: int(line.rsplit(" ", 1)[1]) for line in lines}
    assert sum(counts.values()) == profile.total
    assert any(stack.startswith("callchain;") and stack.endswith(";main;outer;middle;inner;leaf")
               for stack in counts)


def test_speedscope_file_validates_against_speedscopes_schema(arch):
    profile = _profile([SAMPLES / arch / "threads"], interval=20_000, quantum=50_000).profile
    document = speedscope(profile, "threads")
    jsonschema.validate(document, speedscope_schema())
    assert len(document["profiles"]) >= 5                 # the main thread and four workers
    for entry in document["profiles"]:
        assert len(entry["samples"]) == len(entry["weights"])
        assert all(0 <= i < len(document["shared"]["frames"]) for s in entry["samples"] for i in s)


def test_a_schema_violation_is_caught():
    """The validation is not vacuous: a profile with a wrong type is refused."""
    broken = {"$schema": "https://www.speedscope.app/file-format-schema.json",
              "shared": {"frames": []}, "profiles": [{"type": "sampled", "name": "x", "unit": "parsecs",
                                                      "startValue": 0, "endValue": 1, "samples": [], "weights": []}]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, speedscope_schema())


def test_chrome_trace_events(arch):
    profile = _profile([SAMPLES / arch / "callchain", "10"]).profile
    events = chrome_trace(profile)["traceEvents"]
    assert {e["ph"] for e in events} <= {"M", "X", "i"}
    samples = [e for e in events if e["ph"] == "X"]
    assert len(samples) == profile.total
    assert all(e["ts"] >= 0 and e["dur"] == profile.interval / 1000 for e in samples)
    assert [e["ts"] for e in samples] == sorted(e["ts"] for e in samples)


def test_a_recorded_trace_reports_as_the_live_run(tmp_path, arch):
    trace = tmp_path / "run.trace"
    run = run_profiled(Sandbox(), [str(SAMPLES / arch / "callchain"), "20"], interval=1_500,
                       record=str(trace))
    recorded = read_trace(str(trace))
    assert folded_text(recorded) == folded_text(run.profile)
    assert recorded.samples == run.profile.samples and recorded.exit_code == 0
    kinds = [json.loads(line)["t"] for line in trace.read_text().splitlines()]
    assert kinds[0] == "header" and kinds[-1] == "end"
    assert kinds.index("startup-done") < kinds.index("sample")
    assert kinds[1:kinds.index("startup-done")] == ["thread", "module"]


@pytest.mark.parametrize("deb_arch", ["amd64", "i386"])
def test_a_dynamic_debian_binary(debian_rootfs, deb_arch):
    """Debian's sort: no frame pointers, stripped; stacks through libc and the program are
    unwound by CFI and reach the thread's start (glibc's _start marks it undefined)."""
    run = _profile(["/usr/bin/sort", "/usr/share/common-licenses/GPL-3"], interval=5_000,
                   rootfs=str(debian_rootfs[deb_arch]))
    profile = run.profile
    assert run.result.exit_code == 0 and profile.total > 50
    modules = profile.by_module()
    assert modules["libc.so.6"] > 0 and modules["sort"] > 0
    complete = [s for s in profile.samples if not s.truncated]
    assert len(complete) >= 0.9 * profile.total, profile.truncated()
    from_start = [s for s in complete if s.frames[-1].module == "sort" and len(s.frames) > 1]
    assert len(from_start) > profile.total // 2
    for sample in from_start:                # sort's _start -> glibc's __libc_start_main -> ...
        assert (sample.frames[-2].module, sample.frames[-2].function) == ("libc.so.6", "__libc_start_main")


def test_cli_profile_writes_its_files(tmp_path):
    out = tmp_path / "out"
    done = run_trapline(["profile", "--interval", "3000", "-o", str(out),
                         "--record", str(tmp_path / "t.trace"), str(SAMPLES / "x86_64" / "callchain"), "20"],
                        text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("callchain(20) = ")
    assert "Functions" in done.stderr and "leaf" in done.stderr
    assert {p.name for p in out.iterdir()} >= {"profile.folded", "profile.speedscope.json", "profile.trace.json"}
    report = run_trapline(["report", str(tmp_path / "t.trace")], text=True, timeout=300)
    assert report.returncode == 0 and "leaf" in report.stdout


def test_cli_report_refuses_a_file_that_is_no_trace(tmp_path):
    bogus = tmp_path / "bogus"
    bogus.write_text("hello\n")
    done = run_trapline(["report", str(bogus)], text=True, timeout=300)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert "not a trapline profile trace" in done.stderr


def test_the_flame_graph_is_drawn_by_flamegraph_pl(tmp_path, monkeypatch):
    """Debian's flamegraph.pl (libdevel-nytprof-perl) draws the SVG from the folded stacks:
    one rectangle per frame of the merged stacks, leaf named, the title given."""
    import xml.etree.ElementTree as ET

    from tests.e2e.debian_bins import DebianBinsError
    from tests.e2e.flamegraph_tool import ensure_flamegraph
    from trapline.profile.outputs import write_outputs

    try:
        monkeypatch.setenv("TRAPLINE_FLAMEGRAPH", str(ensure_flamegraph()))
    except DebianBinsError as error:
        pytest.fail(f"flamegraph.pl unavailable: {error}", pytrace=False)
    profile = _profile([SAMPLES / "x86_64" / "callchain", "30"]).profile
    notes = write_outputs(profile, str(tmp_path), "callchain 30")
    assert notes[-1].startswith(f"wrote {tmp_path / 'flamegraph.svg'}"), notes
    svg = ET.parse(tmp_path / "flamegraph.svg").getroot()
    texts = {t.text for t in svg.iter("{http://www.w3.org/2000/svg}title")}
    assert any(t and t.startswith("leaf (") for t in texts), sorted(texts)[:10]
    assert any(t and t.startswith("callchain (") for t in texts)
    drawn = (tmp_path / "flamegraph.svg").read_bytes()
    write_outputs(profile, str(tmp_path), "callchain 30")
    assert (tmp_path / "flamegraph.svg").read_bytes() == drawn       # the same bytes again


def test_sampling_every_n_system_calls(arch):
    """--event syscalls: every 2nd call's return is a sample; the stacks lead from _start
    (mostly through main) into musl's system-call wrappers; the speedscope file counts samples."""
    run = run_profiled(Sandbox(), [str(SAMPLES / arch / "fileio")], interval=2, event="syscalls")
    profile = run.profile
    assert run.result.exit_code == 0 and profile.total > 5
    # musl's i386 syscall wrapper lends %ebp to the call's sixth argument inside inline assembly
    # that its CFI does not describe: those stacks stop (truncated), the others reach main
    complete = [s for s in profile.samples if not s.truncated]
    assert len(complete) > profile.total // 2
    assert all(s.frames[-1].name == "_start" for s in complete)
    assert sum("main" in [f.name for f in s.frames] for s in complete) > len(complete) // 2
    assert [s.ts for s in profile.samples] == sorted(s.ts for s in profile.samples)
    document = speedscope(profile, "fileio")
    jsonschema.validate(document, speedscope_schema())
    assert document["profiles"][0]["unit"] == "none"
    assert {e["ph"] for e in chrome_trace(profile)["traceEvents"]} <= {"M", "i"}


def test_traplines_own_notes_are_one_line_each_whatever_the_width(tmp_path):
    """rich wrapped `trapline: wrote ...` and `no flame graph: ...` at the console's width, even
    into a pipe: a note is one line, as a Unix tool's messages are."""
    out = tmp_path / ("a-folder-with-a-long-name-" * 3)
    done = run_trapline(["profile", "--interval", "3000", "-o", str(out),
                         str(SAMPLES / "x86_64" / "callchain"), "20"],
                        text=True, env={**os.environ, "COLUMNS": "40"}, timeout=300)
    assert done.returncode == 0, done.stderr
    wrote = [line for line in done.stderr.splitlines() if line.startswith("trapline: wrote ")]
    assert len(wrote) == 1 and wrote[0].endswith("profile.trace.json"), done.stderr
    assert all(line.startswith("trapline: ") for line in done.stderr.splitlines()
               if "flame graph" in line or "profile.folded" in line), done.stderr
