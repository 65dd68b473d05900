"""`trapline report FILE -o DIR` of a recorded walk-up writes the live run's files (issue 18, seed
004's trace phases: the trace processed later gives the same report as the live run): one
`trapline profile --walk-up -o DIR --record FILE` run, then `trapline report FILE -o DIR2`, and
the Chrome trace — walk-up tracks and steps included — walkup.json, the folded stacks and the
speedscope file are the same bytes. A trace of the previous format version (2) is still read,
and its Chrome trace differs from the live one exactly as trapline/profile/record.py says."""
import json
import subprocess
from pathlib import Path

import pytest

from tests.e2e.forkserver import run_trapline
from tests.e2e.rooted import rooted
from trapline.profile.walkup_report import WALK_TID

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT / "samples" / "bin"
CHAIN = ["leaf", "inner", "middle", "outer"]
FILES = ("profile.folded", "profile.speedscope.json", "profile.trace.json", "walkup.json")

pytestmark = pytest.mark.e2e


def _trapline(*args) -> subprocess.CompletedProcess:
    done = run_trapline([*map(str, args)], timeout=300)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    return done


def _live(tmp_path, arch, *walkup_options) -> tuple[Path, Path]:
    """The walk-up run with -o and --record; (its -o folder, the trace)."""
    # rooted: the guest sees /callchain and no environment, wherever the checkout is
    sandbox, argv = rooted([SAMPLES / arch / "callchain", "60"])
    out, trace = tmp_path / "live", tmp_path / "walk.trace"
    _trapline("profile", "--walk-up", "--interval", 1000, "--window", 20, "--period", 20,
              *walkup_options, "-o", out, "--record", trace, "--rootfs", sandbox.rootfs,
              "--clear-env", *argv)
    return out, trace


def _events(folder: Path) -> list[dict]:
    return json.loads((folder / "profile.trace.json").read_text())["traceEvents"]


def _walk_events(events: list[dict]) -> list[dict]:
    return [e for e in events if e.get("tid", 0) >= WALK_TID]


def _check_walk_events(events: list[dict], walkup: dict) -> None:
    """The walk-up's events are there and agree with walkup.json: the "walk-up" track with an
    instant event per timeline step, and a track per hooked function whose span runs from its
    insert step to its remove step (or the end of the run)."""
    walk = _walk_events(events)
    names = {e["tid"]: e["args"]["name"] for e in walk if e["ph"] == "M"}
    assert names[WALK_TID] == "walk-up"
    steps = [e for e in walk if e["ph"] == "i"]
    assert [(e["name"], e["ts"]) for e in steps] == \
        [(f"{s['action']} {s['kind']} {s['function']}", s["ts"] / 1000) for s in walkup["timeline"]]
    spans = [e for e in walk if e["ph"] == "X"]
    assert [e["name"] for e in spans] == [h["function"] for h in walkup["hooked"]]
    for span in spans:
        name, level = span["name"], span["args"]["level"]
        assert names[span["tid"]] == f"hooks: {name} (level {level})"
        inserted = [s["ts"] for s in walkup["timeline"] if (s["action"], s["function"]) == ("insert", name)]
        removed = [s["ts"] for s in walkup["timeline"] if (s["action"], s["function"]) == ("remove", name)]
        assert span["ts"] == inserted[0] / 1000
        assert span["ts"] + span["dur"] == pytest.approx((removed or [walkup["instructions"]])[0] / 1000)


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_report_writes_the_live_runs_files(tmp_path, arch):
    live, trace = _live(tmp_path, arch, "--threshold", 50)
    again = tmp_path / "again"
    _trapline("report", trace, "-o", again)
    for name in FILES:
        assert (again / name).read_bytes() == (live / name).read_bytes(), name
    events, walkup = _events(again), json.loads((again / "walkup.json").read_text())
    assert events == _events(live)
    _check_walk_events(events, walkup)
    spans = [e for e in _walk_events(events) if e["ph"] == "X"]
    assert [e["name"] for e in spans] == CHAIN           # leaf hot, walked up to main
    assert [e["args"]["invocations"] for e in spans[1:3]] == [20, 20]   # inner, middle: the period
    steps = [e["name"] for e in _walk_events(events) if e["ph"] == "i"]
    assert steps[:3] == ["insert identify leaf", "insert measure inner", "remove identify leaf"]


def test_report_of_joined_walks_writes_the_live_runs_trace(tmp_path):
    """--threshold 1: every sampled function of the first window is hot and the walks meet;
    the tracks of every walk come back, in the live run's order."""
    live, trace = _live(tmp_path, "x86_64", "--threshold", 1)
    again = tmp_path / "again"
    _trapline("report", trace, "-o", again)
    walkup = json.loads((live / "walkup.json").read_text())
    assert any(step["action"] == "join" for step in walkup["timeline"]), "no walk met another"
    assert len({h["walk"] for h in walkup["hooked"]}) > 1
    assert _events(again) == _events(live)
    _check_walk_events(_events(again), walkup)


def test_a_version_2_trace_gives_the_steps_without_the_tracks(tmp_path):
    """A trace written before version 3 (its walkup record's report has no "hooked", version 1)
    is still read; its Chrome trace is the live one without the hooked functions' tracks."""
    live, trace = _live(tmp_path, "x86_64", "--threshold", 50)
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    assert records[0]["version"] == 3
    records[0]["version"] = 2
    for record in records:
        if record["t"] == "walkup":
            del record["report"]["hooked"]
            record["report"]["version"] = 1
    old = tmp_path / "old.trace"
    old.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records))
    again = tmp_path / "again"
    _trapline("report", old, "-o", again)
    expected = [e for e in _events(live) if e.get("tid", 0) <= WALK_TID]
    assert len(expected) < len(_events(live))       # the tracks were there live
    assert _events(again) == expected
    steps = [e for e in _walk_events(expected) if e["ph"] == "i"]
    assert steps and steps[0]["name"] == "insert identify leaf"
