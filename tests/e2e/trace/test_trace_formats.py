"""`trapline trace --format chrome|folded` (issue 18, trapline/trace_formats.py): probe records as a
Chrome trace (entry/return pairs as B/E) and as folded stacks, on fib, both arches. fib(N) calls
itself 2*F(N+1)-1 times, recursing N levels deep: the documents must say exactly that."""
import json
import subprocess
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

import pytest
from tests.e2e.forkserver import run_trapline

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT / "samples" / "bin"
PAIR = ["-p", "uprobe:fib:fib", "-p", "uretprobe:fib:fib"]

pytestmark = pytest.mark.e2e


@pytest.fixture(params=["i386", "x86_64"])
def arch(request) -> str:
    return request.param


def _trace(tmp_path: Path, arch: str, fmt: str, *probes: str) -> str:
    out = tmp_path / f"trace.{fmt}"
    done = run_trapline(["trace", "--format", fmt, "-o", str(out), *probes,
                         "--", str(SAMPLES / arch / "fib"), "6"], timeout=300)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == b"fib(6) = 8\n"                     # the program's output stays apart
    return out.read_text()


def test_chrome_has_a_balanced_duration_per_call(tmp_path, arch):
    events = json.loads(_trace(tmp_path, arch, "chrome", *PAIR, "-p", "proc:exit"))["traceEvents"]
    calls = [e for e in events if e["ph"] == "B"]
    assert len(calls) == len([e for e in events if e["ph"] == "E"]) == 2 * 13 - 1     # F(7) = 13
    depth, deepest, last = defaultdict(int), 0, 0.0
    for event in events:
        if event["ph"] in "BE":
            assert event["name"] == "fib" and event["ts"] >= last
            last = event["ts"]
            depth[event["tid"]] += 1 if event["ph"] == "B" else -1
            assert depth[event["tid"]] >= 0
            deepest = max(deepest, depth[event["tid"]])
    assert set(depth.values()) == {0} and deepest == 6
    assert calls[0]["args"]["args"][0] == "0x6"
    exits = [e for e in events if e["ph"] == "i"]
    assert [(e["cat"], e["args"]["code"]) for e in exits] == [("proc:exit", 0)]


def test_folded_stacks_count_the_calls_at_each_depth(tmp_path, arch):
    lines = _trace(tmp_path, arch, "folded", *PAIR).splitlines()
    counts = {line.rsplit(" ", 1)[0]: int(line.rsplit(" ", 1)[1]) for line in lines}
    # calls of fib(6) at depth d: 1, 2, 4, 8, 8, 2 (fib(1) and fib(0) do not recurse)
    assert counts == {";".join(["fib"] * (d + 1)): n for d, n in enumerate([1, 2, 4, 8, 8, 2], 1)}


def test_an_entry_probe_without_its_return_is_counted_flat(tmp_path, arch):
    assert _trace(tmp_path, arch, "folded", "-p", "uprobe:fib:fib") == "fib;fib 25\n"
    events = json.loads(_trace(tmp_path, arch, "chrome", "-p", "uprobe:fib:fib"))["traceEvents"]
    assert [e["ph"] for e in events] == ["i"] * 25


def test_flamegraph_pl_draws_the_folded_stacks(tmp_path):
    from tests.e2e.debian_bins import DebianBinsError
    from tests.e2e.flamegraph_tool import ensure_flamegraph
    try:
        script = ensure_flamegraph()
    except DebianBinsError as error:
        pytest.fail(f"flamegraph.pl unavailable: {error}", pytrace=False)
    folded = tmp_path / "trace.folded"
    folded.write_text(_trace(tmp_path, "x86_64", "folded", *PAIR))
    svg = subprocess.run(["perl", str(script), str(folded)], capture_output=True, check=True).stdout
    titles = [t.text for t in ET.fromstring(svg).iter("{http://www.w3.org/2000/svg}title")]
    assert any(t.startswith("fib (25 samples") for t in titles), titles


def test_a_document_format_needs_a_file(tmp_path):
    done = run_trapline(["trace", "--format", "chrome", *PAIR, "--",
                         str(SAMPLES / "x86_64" / "fib"), "3"], timeout=120)
    assert done.returncode == 2
    assert done.stderr.decode().splitlines() == [
        "trapline: --format chrome writes one document: give it a file with -o FILE"]
