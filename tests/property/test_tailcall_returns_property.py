"""Return probes on chains of tail-calling functions are lossless (issue 26).

samples/tailcall walks a random SHAPE of steps that tail-call one another directly, call one
another, or end in a leaf, beside its fixed chains (mid -> hot, c3 -> c2 -> c1 -> hot, tail
recursion, a chain left by longjmp, one through an unprobed relay). For a random subset of its
functions probed with uretprobes, each return strategy reports exactly the returns the program
makes (tests/property/tailcall_model.py: function, value and order, innermost first), and the
program prints what it prints unprobed. Each example must reach a chained landing: a return
through a slot shared by two probed frames.
"""
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.e2e.trace.test_tailcall_returns import returns_of

from .tailcall_model import FUNCTIONS, TailcallModel

# Direct tail calls only ('d', 'h'), and real calls ('c'): the jump strategy refuses the
# steps' indirect jumps, so the steps are probed with the trampoline only.
_STEP = st.sampled_from(["d", "h", "c0", "c1", "c2", "c3", "t0", "t1", "t2", "t3", "x"])
_SHAPES = st.lists(_STEP, min_size=1, max_size=6).map("".join)
_FIXED = [f for f in FUNCTIONS if not f.startswith("s")]
# Each example probes one pair of frames that return through one slot, so a chained landing is
# reached in every run (asserted on the model, which the run must match record for record).
_PAIRS = [("mid", "hot"), ("c3", "c1"), ("via", "hot"), ("even", "odd"), ("odd", "last"), ("even", "last")]


@pytest.mark.e2e
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(arch=st.sampled_from(["i386", "x86_64"]),
       strategy=st.sampled_from(["trampoline", "jump", "emulate"]),
       shape=_SHAPES, rounds=st.integers(2, 6), data=st.data())
def test_uretprobes_on_tail_call_chains_report_every_return(arch, strategy, shape, rounds, data):
    # jump and emulate refuse the steps (indirect jumps); emulate refuses thrower (no return)
    pool = FUNCTIONS if strategy == "trampoline" else _FIXED
    pool = [f for f in pool if not (strategy == "emulate" and f == "thrower")]
    probed = set(data.draw(st.sampled_from(_PAIRS), label="pair"))
    probed |= set(data.draw(st.lists(st.sampled_from(pool), unique=True), label="more"))
    probed = sorted(probed)
    expected_output = TailcallModel(()).main(rounds, shape)      # what it prints unprobed
    model = TailcallModel(probed)
    assert model.main(rounds, shape) == expected_output
    assert model.chained_returns > 0
    event(f"{strategy}: {model.chained_returns // rounds} chained returns a round at least")
    result, got = returns_of(arch, probed, strategy, rounds, shape)
    assert result.exit_code == 0 and result.stdout.decode() == expected_output
    assert got == model.returns
