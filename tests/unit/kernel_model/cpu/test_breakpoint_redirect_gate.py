"""The int3 fast path checks the #BP gate without a call per hit (issue 31): redirect_breakpoint
asks whether the Idt's decoded gate for #BP is still the one the redirect was registered under,
a dict look-up where it called Idt.gate on every hit of every trampoline probe."""
from pathlib import Path

import pytest

from instrumenter.probes.definitions import Probe
from kernel_model.cpu.idt import Idt
from kernel_model.cpu.traps import TrapDispatcher
from trapline import Sandbox
from trapline.probespec import parse_probe_spec

SAMPLES = Path(__file__).resolve().parents[4] / "samples" / "bin"


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_a_redirected_int3_reads_no_gate_through_a_call(arch, monkeypatch):
    fib = str(SAMPLES / arch / "fib")
    gates_read, redirected = [0], [0]
    gate, redirect_breakpoint = Idt.gate, TrapDispatcher.redirect_breakpoint

    def counting_gate(self, vector):
        gates_read[0] += 1
        return gate(self, vector)

    def counting_redirect(self, pc):
        ip = redirect_breakpoint(self, pc)
        redirected[0] += ip is not None
        return ip
    monkeypatch.setattr(Idt, "gate", counting_gate)
    monkeypatch.setattr(TrapDispatcher, "redirect_breakpoint", counting_redirect)
    # the Python redirect's own check (the C hook, which takes these hits where it is built,
    # checks no gate per hit either: tests/unit/emu/test_int3_sites.py)
    monkeypatch.setattr(TrapDispatcher, "native_breakpoints", False)
    seen = []
    probe = Probe(parse_probe_spec(f"uprobe:{fib}:fib"), action=lambda ctx: seen.append(ctx.arg(0)))
    result = Sandbox(probes=[probe], strategy="trampoline").run([fib, "12"])
    assert result.exit_code == 0 and len(seen) == 465 and seen[0] == 12
    assert redirected[0] == 465                 # every hit took the fast path
    assert gates_read[0] < 50                   # per registration and per trap, not per hit
