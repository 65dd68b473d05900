"""The walk-up's hooks in threads, recursion and longjmp (issue 18), on samples/hotchain: three
threads run `crunch -> level3 -> level2 -> level1 -> hot` (and `dig` recursing into `hot`), and
every seventh level2 call longjmps out of level1 back to crunch. Full instrumentation counts
exactly what the program counts, abandoned frames included; the walk-up's levels pair every
exit with its entry (or the longjmp that abandoned it, or an activation still open at the end),
remove their hooks while other threads are inside, and leave the output alone."""
from pathlib import Path

import pytest

from instrumenter.profiler.walkup import WalkUpOptions
from trapline.profile.walkup_run import run_baseline, run_full, run_walkup
from tests.e2e.rooted import rooted
from tests.quick_profile import alternates
from trapline.sandbox import Sandbox

SAMPLES = Path(__file__).resolve().parents[3] / "samples" / "bin"

pytestmark = pytest.mark.e2e


@pytest.fixture(params=["i386", "x86_64"])
def arch(request) -> str:
    return request.param


def _counts(stdout: bytes) -> dict:
    return {key: int(value) for key, value in
            (item.split("=") for item in stdout.decode().split()[3:])}


def test_full_instrumentation_counts_threads_and_longjmps_exactly(arch):
    cost, full = run_full(*rooted([SAMPLES / arch / "hotchain", "30", "5"]))
    program = _counts(cost.stdout)
    metric = {e.function.name: e.metric for e in full.callers}
    for name in ("hot", "dig", "level1", "level2", "level3"):
        assert metric[name].invocations == program[name], name
    for name in ("level1", "level2", "level3"):             # each longjmp leaves one frame of each
        assert metric[name].abandoned == program["jumps"] == 24
        assert metric[name].returns + metric[name].abandoned == metric[name].invocations
    assert metric["crunch"].invocations == metric["crunch"].returns == 3


@pytest.mark.parametrize("exclusive", ["off", "exact"])
@alternates("arch")
def test_the_walk_up_in_threads_pairs_every_exit_and_keeps_the_output(arch, exclusive):
    argv = [str(SAMPLES / arch / "hotchain"), "40", "5"]
    # dig takes ~1/3 of hot's calls: whether the walk-up climbs into it depends on where the
    # samples fall, which the schedule moves (at threshold 30, x86-64's block quanta do not)
    options = WalkUpOptions(threshold=25, window=20, min_calls=20, period=30, exclusive=exclusive)
    run = run_walkup(*rooted(argv), interval=1_000, options=options)
    assert run.result.stdout == run_baseline(*rooted(argv)).stdout
    walk = run.walk
    open_by: dict = {}
    for activation in walk.activations.still_open():
        open_by[activation.entry.function.name] = open_by.get(activation.entry.function.name, 0) + 1
    measured = [e for e in walk.callers if e.level > 0]
    assert {"level1", "level2", "dig"} <= {e.function.name for e in measured}
    for entry in measured:
        m = entry.metric
        assert m.returns + m.abandoned + open_by.get(entry.function.name, 0) == m.invocations
    # longjmps out of instrumented level1/level2 frames were seen as such, not as returns
    assert sum(e.metric.abandoned for e in measured) >= 1
    tids = {tid for tid, stack in walk.activations.by_tid.items()}
    assert len(tids) >= 2                                   # hooks ran in several threads
    inserted = sorted(s.function for s in walk.timeline if s.action == "insert")
    removed = [s.function for s in walk.timeline if s.action == "remove"]
    still = walk.callers.instrumented() + walk.callers.timing()      # timed for a measured caller
    assert inserted == sorted(removed + [e.function for e in still])
    assert walk.hooks.executed == sum(e.hook_runs for e in walk.callers)
    timed = walk.callers.timing() or any(s.kind == "time" for s in walk.timeline)
    assert bool(timed) == (exclusive == "exact")


def test_a_uretprobe_survives_longjmp_out_of_its_function(arch):
    """level1 longjmps out after its calls every seventh time, leaving its return slot with the
    landing; the next level1 call (from another call site of level2, at the same stack depth)
    must return to its own caller, not to the abandoned frame's (uretprobes.py drops dead
    frames at entry, as Linux's cleanup_return_instances does)."""
    argv = [str(SAMPLES / arch / "hotchain"), "20", "1"]
    plain = run_baseline(Sandbox(), argv).stdout
    traced = Sandbox(probes=["uretprobe:hotchain:level1"]).run(argv)
    assert traced.stdout == plain
    counts = _counts(plain)
    returns = [r for r in traced.records if r.kind == "return"]
    assert len(returns) == counts["level1"] - counts["jumps"]
