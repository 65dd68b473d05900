"""The walk-up's invariants on random settings (issue 18): for random chain lengths (the rounds
of samples/callchain), sampling windows, thresholds, periods, metrics and level limits, the
walk-up run prints exactly what the unprofiled run prints; every hook inserted is removed or
still listed at the end; every hook execution is counted for some function; every measured
entry has its exit, a longjmp's abandonment or is still open; each level's function is a real
caller of the level below it (the program's static call graph is the ground truth). Both ways
of --exclusive: with "off" the walk places no timing hook and keeps no exclusive figure — each
hook run is an identifying or a measuring one (US 7,823,129's walk-up, test_walkup_exclusive.py);
with "exact" each exclusive count is at most its inclusive."""
import pytest
from hypothesis import given, settings, strategies as st

from instrumenter.profiler.callers import IDENTIFYING
from instrumenter.profiler.walkup import WalkUpOptions
from trapline.profile.walkup_run import run_baseline, run_walkup
from trapline.sandbox import Sandbox
from tests.e2e.profile.test_walkup import SAMPLES
from tests.e2e.profile.test_walkup_exclusive import assert_only_seed_hooks, seed_hooks

MIN_ACCEPTED = 15               # examples whose walk inserted a hook (some decide none: short runs)
MIN_TIMED = 3                   # of them, exact ones whose walk timed a callee
CALLS = {("main", "outer"), ("outer", "middle"), ("middle", "inner"), ("inner", "leaf"),
         ("main", "spiral"), ("spiral", "spiral"), ("spiral", "leaf")}
TRACKED = {name for pair in CALLS for name in pair}
_baselines: dict = {}


def _baseline(argv) -> bytes:
    key = tuple(argv)
    if key not in _baselines:
        _baselines[key] = run_baseline(Sandbox(), argv).stdout
    return _baselines[key]


def _check(walk, stdout: bytes, expected: bytes) -> bool:
    assert stdout == expected
    _exclusive_as_chosen(walk)
    inserted = sorted(s.function for s in walk.timeline if s.action == "insert")
    removed = [s.function for s in walk.timeline if s.action == "remove"]
    still = [e.function for e in walk.callers.instrumented() + walk.callers.timing()]
    assert inserted == sorted(removed + still) and sorted(walk.hooks.probes) == sorted(still)
    assert walk.hooks.executed == sum(e.hook_runs for e in walk.callers)
    open_by = {}
    for o in walk.activations.still_open():
        open_by[o.entry.function] = open_by.get(o.entry.function, 0) + 1
    for entry in walk.callers:
        m = entry.metric
        if entry.level > 0 or (entry.state != IDENTIFYING and m.returns):
            assert m.returns + m.abandoned + open_by.get(entry.function, 0) == m.invocations
        for caller in entry.callers:
            if caller.name in TRACKED and entry.function.name in TRACKED:
                assert (caller.name, entry.function.name) in CALLS
        if entry.level > 0 and entry.hot_spot is not None:
            below = [c for c in entry.callees if c in walk.callers.entries
                     and walk.callers.entry(c).level == entry.level - 1]
            assert below, entry
    _every_chain_says_why_it_stopped(walk)
    return bool(inserted)


def _exclusive_as_chosen(walk) -> None:
    if walk.options.exclusive == "off":
        assert_only_seed_hooks(walk)
        return
    assert walk.hooks.executed >= seed_hooks(walk)      # the timing hooks' runs on top
    for entry in walk.callers:
        m = entry.metric
        if m.returns:
            assert 0 <= m.insns_exclusive <= m.insns_inclusive, entry


def _timed(walk) -> bool:
    return any(s.kind == "time" for s in walk.timeline)


def _every_chain_says_why_it_stopped(walk) -> None:
    """Each hot spot's chain has a reason where it ended, and every function a walk hooked
    either led the walk on or says why it did not (issue 26: a recursive hot spot, or a run
    that ended before --min-calls, left chains with neither)."""
    for spot in walk.detector.decided:
        assert walk.ends_of(spot), spot
    for entry in walk.callers:
        if entry.hot_spot is not None and entry.instrumented_at is not None:
            assert entry.went_on or entry.stops, entry


@pytest.mark.parametrize("exclusive", ["off", "exact"])
@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_the_walk_up_leaves_the_program_alone_and_accounts_every_hook(arch, exclusive):
    accepted, timed = [], []

    @settings(max_examples=max(settings().max_examples, MIN_ACCEPTED + 10))
    @given(rounds=st.integers(min_value=2, max_value=40), window=st.integers(min_value=3, max_value=40),
           threshold=st.sampled_from([5.0, 20.0, 50.0, 95.0]), period=st.integers(min_value=1, max_value=30),
           metric=st.sampled_from(["calls", "insns"]), max_levels=st.integers(min_value=1, max_value=5),
           min_calls=st.integers(min_value=1, max_value=14))
    def check(rounds, window, threshold, period, metric, max_levels, min_calls):
        argv = [str(SAMPLES / arch / "callchain"), str(rounds)]
        options = WalkUpOptions(threshold=threshold, window=window, min_calls=min_calls, metric=metric,
                                period=period * (300 if metric == "insns" else 1), max_levels=max_levels,
                                exclusive=exclusive)
        run = run_walkup(Sandbox(), argv, interval=500, options=options)
        if _check(run.walk, run.result.stdout, _baseline(argv)):
            accepted.append(rounds)
            if _timed(run.walk):
                timed.append(rounds)

    check()
    assert len(accepted) >= MIN_ACCEPTED, accepted
    if exclusive == "exact":                # ("off": none, _exclusive_as_chosen)
        assert len(timed) >= MIN_TIMED, timed
