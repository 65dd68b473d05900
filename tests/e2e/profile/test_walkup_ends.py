"""The walk-up's answers (issue 26), both arches: a recursive hot spot's walk goes past its
recursion to the first caller outside it, and every chain says why it stopped; a measured
level's exclusive count is its inclusive less the callees it called, over the same calls —
checked against full instrumentation of the same program, where every function is hooked."""
from pathlib import Path

import pytest

from instrumenter.profiler.walkup import WalkUpOptions
from trapline.profile.walkup_report import walkup_json
from trapline.profile.walkup_run import run_full, run_walkup
from tests.e2e.rooted import rooted

SAMPLES = Path(__file__).resolve().parents[3] / "samples" / "bin"

pytestmark = pytest.mark.e2e


@pytest.fixture(params=["i386", "x86_64"])
def arch(request) -> str:
    return request.param


def _walk(argv, **options):
    settings = dict(window=20, period=20, threshold=50) | options
    return run_walkup(*rooted(argv), interval=1_000, options=WalkUpOptions(**settings))


def test_a_recursive_hot_spot_walks_past_its_recursion_to_main(arch):
    """fib's identifying hook sees fib call fib (its outermost call was made before the hook):
    before, the walk ended there with no top and no reason."""
    run = _walk([SAMPLES / arch / "fib", "18"])
    walk = run.walk
    (spot,) = walk.detector.decided
    fib = walk.callers.entry(spot)
    assert spot.name == "fib" and set(fib.callers) == {spot}          # only recursive calls seen
    assert [f.name for f in fib.outside] == ["main"]                  # the stack's outside caller
    assert [f.name for f in walk.tops_of(spot)] == ["main"]
    (report,) = walkup_json(run)["hot_spots"]
    assert report["top"] == ["main"]
    assert [(e["function"], e["level"], e["reason"]) for e in report["ends"]] == [("fib", 0, "top")]
    assert report["chain"][0]["outside_callers"] == [{"function": "main", "calls": 1}]


def test_a_hot_phase_that_ends_before_min_calls_says_so(arch):
    run = _walk([SAMPLES / arch / "callchain", "40"], min_calls=100_000)
    (report,) = walkup_json(run)["hot_spots"]
    assert report["chain"][0]["state"] == "identifying"
    (end,) = report["ends"]
    assert (end["function"], end["reason"]) == ("leaf", "ended-identifying")
    assert "of the 100000 calls" in end["why"]


def test_exclusive_is_inclusive_less_the_callees_as_full_instrumentation_counts_it(arch):
    """Every call of inner (4 leafs), middle (3 inners) and outer (1 middle) runs the same
    instructions: an exclusive count per call is comparable across runs. Full instrumentation
    hooks every function for the whole run, so each of its activations excludes its callees';
    the walk-up's must be the same. Before, inner's was its inclusive (7740/7740 on x86-64):
    leaf was no longer hooked while inner was measured."""
    argv = [SAMPLES / arch / "callchain", "100"]
    walk = _walk(argv, min_calls=13, exclusive="exact").walk
    _, full = run_full(*rooted(argv))
    measured = {e.function.name: e for e in walk.callers}
    everything = {e.function.name: e.metric for e in full.callers}
    for name, callee in (("inner", "leaf"), ("middle", "inner"), ("outer", "middle")):
        m = measured[name].metric
        assert [f.name for f in measured[name].timed] == [callee]
        assert m.invocations == m.returns == 20
        per_call = everything[name].insns_exclusive / everything[name].invocations
        assert m.insns_exclusive == 20 * per_call, name
        assert m.insns_exclusive < m.insns_inclusive / 10            # the callee does the work
    # inner's exclusive is its inclusive less its leafs' (4 a call; spiral calls leaf too, and
    # every leaf runs the same instructions), in full instrumentation's own counts
    leaf, inner = everything["leaf"], everything["inner"]
    from_inner = 4 * inner.invocations * leaf.insns_inclusive // leaf.invocations
    assert inner.insns_exclusive == inner.insns_inclusive - from_inner
