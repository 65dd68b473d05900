"""Return probes on functions that leave by a tail jump (issue 26).

samples/tailcall: mid tail-jumps to hot, c3 -> c2 -> c1 -> hot, via -> relay -> hot, even and
odd recurse by tail jumps, jumper's chain is left by longjmp, s0..s3 walk a shape with direct
and indirect tail jumps. Every strategy that counts exactly reports every return of every
probed function, innermost first with the callee's value (tests/property/tailcall_model.py),
and the program's output is that of the unprobed run.
"""
import pytest

from instrumenter.probes.definitions import Probe
from trapline import Sandbox
from trapline.probespec import parse_probe_spec

from ...property.tailcall_model import FUNCTIONS, TailcallModel
from ..samples.test_samples_run import SAMPLES
from tests.quick_profile import alternates

# singlestep is exact here: the sample has one thread
STRATEGIES = ("trampoline", "jump", "emulate", "emulate-lock", "singlestep",
              "singlestep-stopall", "relocate")
ROUNDS = 12
# The jump and relocate strategies refuse a function with an indirect jump (it might land inside
# the patched bytes, or anywhere in a copy: jump.py qualify_in, relocate/blocks.py), which the
# steps' switch compiles to.
# emulate refuses a return probe on a function with no ret and no jump out (thrower only calls
# longjmp): it never returns.
# It refuses one with an indirect jump too, which it cannot emulate (a tail call through a
# pointer would be missed): the steps' switch and their calls through the table.
STEPS = {"s0", "s1", "s2", "s3"}
REFUSED = {"jump": STEPS, "relocate": STEPS, "emulate": STEPS | {"thrower"}, "emulate-lock": STEPS | {"thrower"}}


def returns_of(arch: str, probed, strategy: str, rounds: int = ROUNDS, shape=None):
    binary = str(SAMPLES / arch / "tailcall")
    argv = [binary, str(rounds)] + ([shape] if shape is not None else [])
    probes = [Probe(parse_probe_spec(f"uretprobe:{binary}:{name}"), nargs=0) for name in probed]
    result = Sandbox(probes=probes, strategy=strategy).run(argv)
    by_text = {p.spec.text: name for p, name in zip(probes, probed)}
    got = [(by_text[r.probe], r.retval & 0xFFFF_FFFF) for r in result.records if r.kind == "return"]
    return result, got


@pytest.mark.e2e
@pytest.mark.parametrize("arch", ["i386", "x86_64"])
@pytest.mark.parametrize("strategy", STRATEGIES)
@alternates("arch")
def test_every_chained_return_is_reported_innermost_first(arch, strategy):
    # one chain goes through relay unprobed
    probed = [f for f in FUNCTIONS if f != "relay" and f not in REFUSED.get(strategy, ())]
    model = TailcallModel(probed)
    expected_output = model.main(ROUNDS)
    result, got = returns_of(arch, probed, strategy)
    assert result.exit_code == 0 and result.dropped == {}
    assert result.stdout.decode() == expected_output
    assert model.chained_returns > 0
    assert got == model.returns


@pytest.mark.e2e
@pytest.mark.parametrize("arch", ["i386", "x86_64"])
@pytest.mark.parametrize("strategy", ("trampoline", "jump", "emulate"))
@alternates("arch")
def test_the_issue_s_hot_and_mid(arch, strategy):
    """The issue's case: hot probed with mid records as many returns as probed alone."""
    alone, _ = returns_of(arch, ["hot"], strategy)
    both, got = returns_of(arch, ["hot", "mid"], strategy)
    calls = dict(kv.split("=") for kv in both.stdout.decode().split())
    assert alone.hits["uretprobe:" + str(SAMPLES / arch / "tailcall") + ":hot"] == int(calls["hot"])
    assert sum(1 for name, _ in got if name == "hot") == int(calls["hot"])
    assert sum(1 for name, _ in got if name == "mid") == int(calls["mid"])
    # each mid return right after the hot return it came through, with its value
    for index, (name, value) in enumerate(got):
        if name == "mid":
            assert got[index - 1] == ("hot", value)


@pytest.mark.e2e
@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_emulate_refuses_a_return_probe_it_would_miss_with_the_reason(arch):
    """s0 may tail-call through a pointer (`jmp *`), which emulate cannot run: the probe is
    refused, saying why, instead of missing those returns."""
    with pytest.raises(Exception, match=r"s0 may leave by `jmp .*would be missed"):
        returns_of(arch, ["s0"], "emulate")
