"""The walk-up's exclusive metric (hooks.Activations, issue 26) over random call trees with
recursion: when every function is measured and times the callees it calls, each function's
exclusive sum is the time spent in its own code, and the exclusive sums add up to the root's
inclusive — a recursive function counted once inclusive and its frames never twice. Both ways
of naming the caller: by return address, as the walk-up's hooks do, and the enclosing
activation, as full instrumentation does. Without an exclusive figure (the walk-up's
--exclusive off) the inclusive sums and the counts are the same, and no exclusive is made up."""
from hypothesis import given, settings, strategies as st

from instrumenter.profiler.callers import CallerList, FunctionId
from instrumenter.profiler.hooks import ENCLOSING, Activations

NAMES = ("a", "b", "c", "d")
OUTSIDE = FunctionId("prog", "main", 0x1000)
WORD = 8


def _function(name: str) -> FunctionId:
    return FunctionId("prog", name, 0x2000 + 0x100 * NAMES.index(name))


# A call tree: (function, its own cost before, after and between its calls, its calls).
trees = st.recursive(
    st.tuples(st.sampled_from(NAMES), st.lists(st.integers(0, 50), min_size=1, max_size=1), st.just([])),
    lambda children: st.tuples(st.sampled_from(NAMES), st.lists(st.integers(0, 50), min_size=2, max_size=5),
                               st.lists(children, min_size=1, max_size=4)),
    max_leaves=12)


class _Run:
    def __init__(self, by_return_address: bool, exclusive: bool = True):
        self.callers, self.activations = CallerList(exclusive=exclusive), Activations()
        self.by_return_address = by_return_address
        self.clock, self.own, self.recursive = 0, {}, False

    def call(self, tree, caller: FunctionId, sp: int) -> None:
        name, costs, calls = tree
        function = _function(name)
        entry = self.callers.entry(function)
        entry.timed = tuple(_function(n) for n in NAMES if n != name)   # it times every callee
        self.recursive |= function == caller
        caller_named = caller if self.by_return_address else ENCLOSING
        entry.metric.invocations += 1
        self.activations.enter(1, entry, sp, self.clock, self.clock, caller=caller_named)
        for index, cost in enumerate(costs):
            self.clock += cost
            self.own[name] = self.own.get(name, 0) + cost
            if index < len(calls):
                self.call(calls[index], function, sp - 4 * WORD)
        for rest in calls[len(costs):]:
            self.call(rest, function, sp - 4 * WORD)
        assert self.activations.leave(1, sp, self.clock, self.clock) is not None


@settings(max_examples=300)
@given(tree=trees, by_return_address=st.booleans())
def test_exclusive_sums_add_up_to_the_roots_inclusive(tree, by_return_address):
    run = _Run(by_return_address)
    run.call(tree, OUTSIDE, 0x7fff0000)
    root = run.callers.entry(_function(tree[0])).metric
    metrics = {entry.function.name: entry.metric for entry in run.callers}
    assert sum(m.insns_exclusive for m in metrics.values()) == root.insns_inclusive == run.clock
    assert sum(m.time_exclusive for m in metrics.values()) == root.time_inclusive
    for name, metric in metrics.items():
        assert metric.insns_exclusive == run.own[name]          # its own code, every frame once
        assert metric.returns == metric.invocations and not metric.abandoned
    assert not run.activations.still_open()


def test_the_property_meets_recursion():
    """A tree where a function calls itself is among those the strategy draws (not vacuous)."""
    seen = []

    @settings(max_examples=100)
    @given(tree=trees)
    def draw(tree):
        run = _Run(True)
        run.call(tree, OUTSIDE, 0x7fff0000)
        seen.append(run.recursive)

    draw()
    assert any(seen)


@settings(max_examples=300)
@given(tree=trees, by_return_address=st.booleans())
def test_without_exclusive_the_inclusive_sums_are_the_same_and_none_is_made_up(tree, by_return_address):
    exact, off = _Run(by_return_address), _Run(by_return_address, exclusive=False)
    for run in (exact, off):
        run.call(tree, OUTSIDE, 0x7fff0000)
    for entry in off.callers:
        m, x = entry.metric, exact.callers.entry(entry.function).metric
        assert m.insns_exclusive is None and m.time_exclusive is None
        assert (m.invocations, m.returns, m.abandoned, m.insns_inclusive, m.time_inclusive) == \
            (x.invocations, x.returns, x.abandoned, x.insns_inclusive, x.time_inclusive)
    assert off.callers.entry(_function(tree[0])).metric.insns_inclusive == off.clock
