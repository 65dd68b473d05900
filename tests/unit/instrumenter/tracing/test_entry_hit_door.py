"""A uprobe's entry hook asks the door for its space's CPU view once per space, not once per hit:
a Python action's ProbeContext gets the view the hook keeps (issue 31: the look-up was part of
every int3 hit with an action)."""
from pathlib import Path

import pytest

from instrumenter.probes.definitions import Probe
from trapline import Sandbox
from trapline.probespec import parse_probe_spec

SAMPLES = Path(__file__).resolve().parents[4] / "samples" / "bin"


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
@pytest.mark.parametrize("strategy", ["trampoline", "jump"])
def test_an_action_s_context_comes_without_a_door_look_up_per_hit(arch, strategy, monkeypatch):
    from kernel_model.debug.access import ProcessAccess
    fib = str(SAMPLES / arch / "fib")
    looked_up, seen = [0], []
    original = ProcessAccess.cpu

    def counting(self, process):
        looked_up[0] += 1
        return original(self, process)
    monkeypatch.setattr(ProcessAccess, "cpu", counting)

    def action(ctx):
        seen.append((ctx.arg(0), ctx.timestamp))
    probe = Probe(parse_probe_spec(f"uprobe:{fib}:fib"), action=action)
    result = Sandbox(probes=[probe], strategy=strategy).run([fib, "12"])
    assert result.exit_code == 0 and result.hits[f"uprobe:{fib}:fib"] == len(seen) == 465
    assert seen[0][0] == 12 and all(a[1] < b[1] for a, b in zip(seen, seen[1:]))
    assert looked_up[0] < 20                # per space and per event, not per hit (465)
