"""`trapline profile --walk-up --exclusive off|exact`, both arches, on samples/callchain (main ->
outer -> middle -> inner -> leaf, leaf hot). "exact" keeps each measured level's callees hooked
to time them, so its exclusive count is exact (test_walkup_ends.py), at a price in hooks;
"off", the default, places only US 7,823,129's hooks — the identifying hook, then each measured
level's entry and exit — exactly what the walk-up executed before the timing hooks came in
(173 hooks on x86-64 callchain 100, 3.89% of full instrumentation's, where exact runs 531),
and reports no exclusive figure rather than one that subtracts only the callees measured at
the same moment (inner's 7740 of 7740 on x86-64)."""
import json
import os
from pathlib import Path

import pytest

from instrumenter.profiler.walkup import WalkUpOptions
from trapline.profile.walkup_report import chrome_events, tables, walkup_json
from trapline.profile.walkup_run import run_walkup
from tests.e2e.forkserver import run_trapline
from tests.e2e.rooted import rooted

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT / "samples" / "bin"
PERIOD, MIN_CALLS = 20, 13
LEVELS = ("inner", "spiral", "middle", "outer")

pytestmark = pytest.mark.e2e


@pytest.fixture(params=["i386", "x86_64"])
def arch(request) -> str:
    return request.param


def _walk(arch: str, exclusive: str):
    argv = [SAMPLES / arch / "callchain", "100"]
    options = WalkUpOptions(window=20, period=PERIOD, threshold=50, min_calls=MIN_CALLS, exclusive=exclusive)
    return run_walkup(*rooted(argv), interval=1_000, options=options)


def seed_hooks(walk) -> int:
    """The hook runs of US 7,823,129's walk-up, from what the walk measured: one per identifying
    call, and per measured activation its entry and, where it returned, its exit."""
    return sum(e.metric.invocations + e.metric.returns for e in walk.callers)


def assert_only_seed_hooks(walk) -> None:
    """--exclusive off: no function hooked to time a caller, no exclusive figure, and every
    hook run is an identifying or a measuring one, each function's its own."""
    assert not any(s.kind == "time" for s in walk.timeline)
    assert not any(p.spec.text.startswith("walkup:time:") for p in walk.hooks.placed)
    assert not walk.callers.timing()
    for entry in walk.callers:
        m = entry.metric
        assert entry.timed == () and m.insns_exclusive is None and m.time_exclusive is None
        assert entry.hook_runs == m.invocations + m.returns, entry.function.name
    assert walk.hooks.executed == seed_hooks(walk)


def _steps(walk) -> list:
    return [(s.action, s.kind, s.function.name, s.level) for s in walk.timeline if s.kind != "time"]


def test_off_executes_exactly_the_walk_ups_own_hooks(arch):
    off, exact = _walk(arch, "off"), _walk(arch, "exact")
    assert off.result.stdout == exact.result.stdout
    assert_only_seed_hooks(off.walk)
    # leaf's identifying hook waits for its --min-calls; each of the 4 levels above runs its
    # period of calls, entry and exit: the walk-up's hooks before the timing ones (173)
    assert off.cost.hooks == MIN_CALLS + len(LEVELS) * 2 * PERIOD
    # exact walks the same way and measures the same calls, plus the runs of its timing hooks
    assert _steps(off.walk) == _steps(exact.walk)
    assert any(s.kind == "time" for s in exact.walk.timeline)
    for name in LEVELS:
        (o,) = [e.metric for e in off.walk.callers if e.function.name == name]
        (x,) = [e.metric for e in exact.walk.callers if e.function.name == name]
        assert (o.invocations, o.returns, o.abandoned) == (x.invocations, x.returns, x.abandoned) == (20, 20, 0)
        assert 0 < x.insns_exclusive < x.insns_inclusive
    assert exact.cost.hooks > seed_hooks(exact.walk) == off.cost.hooks


def test_off_reports_no_exclusive_figure_and_exact_does(arch):
    for exclusive, shown in (("off", False), ("exact", True)):
        run = _walk(arch, exclusive)
        data = walkup_json(run)
        assert data["options"]["exclusive"] == exclusive
        levels = data["hot_spots"][0]["chain"]
        assert [level["function"] for level in levels] == ["leaf", *LEVELS]
        chain = tables(data)[0]
        assert ("insns excl" in [c.header for c in chain.columns]) == shown
        assert all((level["insns_exclusive"] is not None) == shown for level in levels)
        assert all((level["time_exclusive"] is not None) == shown for level in levels)
        assert any(level["timed_callees"] for level in levels) == shown
        tracks = [e for e in chrome_events(data, run.profile) if e["ph"] == "X"]
        assert tracks and all(("insns_exclusive" in e["args"]) == shown for e in tracks)
    # a recorded report from before the option: version 3's counts were exact, 1's and 2's not
    del data["options"]["exclusive"]
    for version, shown in ((3, True), (2, False), (1, False)):
        data["version"] = version
        assert ("insns excl" in [c.header for c in tables(data)[0].columns]) == shown


def test_the_cli_takes_exclusive(tmp_path):
    program = SAMPLES / "x86_64" / "callchain"
    reports = {}
    for exclusive in ("off", "exact", "bogus"):
        done = run_trapline(["profile", "--walk-up", "--interval", "1000",
                             "--window", "20", "--period", "20", "--exclusive", exclusive,
                             "-o", str(tmp_path / exclusive), "--rootfs", str(program.parent),
                             "--clear-env", f"/{program.name}", "40"],
                            timeout=300, env=os.environ | {"COLUMNS": "200"})     # no header wrapped
        reports[exclusive] = done
    assert reports["bogus"].returncode == 2
    assert "'bogus' is not one of 'off', 'exact'" in reports["bogus"].stderr.decode()
    for exclusive, shown in (("off", False), ("exact", True)):
        done = reports[exclusive]
        assert done.returncode == 0, done.stderr.decode()
        assert ("insns excl" in done.stderr.decode()) == shown
        data = json.loads((tmp_path / exclusive / "walkup.json").read_text())
        assert data["version"] == 4 and data["options"]["exclusive"] == exclusive
        assert any(s["kind"] == "time" for s in data["timeline"]) == shown
