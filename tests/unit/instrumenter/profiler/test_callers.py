"""The caller list (US 7,823,129 [0204]-[0214]) and the per-thread activations of hooks.py:
callers and callees learned from return addresses, inclusive/exclusive sums with recursion
counted once, frames a longjmp abandoned, exits with no entry ignored; a list that keeps no
exclusive sums (the walk-up's --exclusive off) has none to show."""
import pytest

from instrumenter.profiler.callers import IDLE, MEASURING, CallerList, FunctionId
from instrumenter.profiler.hooks import Activations
from instrumenter.profiler.walkup import WalkUpOptions

F, G, H = (FunctionId("prog", name, 0x100 * i) for i, name in enumerate("fgh", 1))


def test_a_call_teaches_both_sides():
    callers = CallerList()
    callers.saw_call(G, F)
    callers.saw_call(H, F, "H tail-called it")
    callers.saw_call(H, F)
    entry = callers.entry(F)
    assert entry.callers == {G: 1, H: 2} and callers.entry(H).callees == {F: 2}
    assert callers.callers_of(F) == [H, G]                      # most calls first
    assert entry.uncertain == {H: "H tail-called it"}
    assert [e.function for e in callers] == [F, G, H]           # insertion order


def test_instrumented_lists_the_entries_with_hooks_in():
    callers = CallerList()
    callers.entry(F).state = MEASURING
    callers.entry(G)
    assert [e.function for e in callers.instrumented()] == [F] and callers.entry(G).state == IDLE


def _entries():
    callers = CallerList()
    return callers.entry(F), callers.entry(G)


def test_nested_activations_split_inclusive_from_exclusive():
    f, g = _entries()
    acts = Activations()
    acts.enter(1, f, sp=1000, insns=0, time=0)
    acts.enter(1, g, sp=900, insns=10, time=0)
    acts.leave(1, 900, insns=40, time=0)
    acts.leave(1, 1000, insns=50, time=7)
    assert (g.metric.insns_inclusive, g.metric.insns_exclusive) == (30, 30)
    assert (f.metric.insns_inclusive, f.metric.insns_exclusive) == (50, 20)
    assert (f.metric.time_inclusive, f.metric.returns) == (7, 1)


def test_recursion_counts_inclusive_once_and_exclusive_per_frame():
    f, _ = _entries()
    acts = Activations()
    acts.enter(1, f, sp=1000, insns=0, time=0)
    acts.enter(1, f, sp=900, insns=10, time=0)
    acts.leave(1, 900, insns=30, time=0)
    acts.leave(1, 1000, insns=100, time=0)
    assert f.metric.insns_inclusive == 100                  # not 120
    assert f.metric.insns_exclusive == 100                  # 80 + 20
    assert f.metric.returns == 2


def test_longjmp_abandons_the_deeper_frames_and_threads_are_apart():
    f, g = _entries()
    acts = Activations()
    acts.enter(1, f, sp=1000, insns=0, time=0)
    acts.enter(1, g, sp=900, insns=5, time=0)
    acts.enter(2, g, sp=5000, insns=6, time=0)
    done = acts.leave(1, 1000, insns=50, time=0)            # longjmp out of g, then f returns
    assert done.entry is f and g.metric.abandoned == 1 and f.metric.insns_exclusive == 50
    assert acts.leave(1, 1234, insns=60, time=0) is None    # an exit whose entry was never seen
    assert [o.entry for o in acts.still_open()] == [g]      # thread 2's


def test_a_frame_a_longjmp_left_at_the_same_depth_is_dead_at_the_next_entry():
    f, _ = _entries()
    acts = Activations()
    acts.enter(1, f, sp=900, insns=0, time=0)               # longjmp'd out of: never returns
    acts.enter(1, f, sp=900, insns=100, time=0)             # called again at the same depth
    acts.leave(1, 900, insns=130, time=0)
    assert (f.metric.abandoned, f.metric.returns, f.metric.insns_inclusive) == (1, 1, 30)
    assert acts.still_open() == []


def test_a_list_without_exclusive_sums_keeps_the_inclusive_ones_and_no_exclusive():
    callers = CallerList(exclusive=False)
    f, g = callers.entry(F), callers.entry(G)
    acts = Activations()
    acts.enter(1, f, sp=1000, insns=0, time=0)
    acts.enter(1, g, sp=900, insns=10, time=0)
    acts.leave(1, 900, insns=40, time=0)
    acts.leave(1, 1000, insns=50, time=7)
    assert (g.metric.insns_inclusive, g.metric.insns_exclusive, g.metric.time_exclusive) == (30, None, None)
    assert (f.metric.insns_inclusive, f.metric.insns_exclusive, f.metric.returns) == (50, None, 1)


def test_the_walk_ups_exclusive_option_is_off_or_exact():
    assert WalkUpOptions().exclusive == "off"
    WalkUpOptions(exclusive="exact").check()
    with pytest.raises(ValueError, match="exclusive 'some': expected one of off, exact"):
        WalkUpOptions(exclusive="some").check()
