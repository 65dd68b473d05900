"""The C hit path of int3 probes (emu/int3_sites.py) changes nothing a tool or the guest sees
(issue 31): random sets of trampoline probes on the samples' functions (some with a Python
action that reads the hit's context, some recording only, 0-3 argument words), run once with
the Machine's C interrupt hook taking the hits and once with the Python path only
(TrapDispatcher.native_breakpoints False), give the same records (ts, pid, tid, arguments),
the same context at every action (timestamp, registers, argument words), the same output and
exit. Forks (fork_probe, vfork_probe) and threads (threads) are among them: a fork child's
Machine gets its own table, a vfork child's shared space a gate (the C path disarmed), threads
share a Machine. The C path must have taken hits in every example with a probe that fires."""
from pathlib import Path

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

import emu.int3_sites as int3_sites
from instrumenter.probes.definitions import Probe
from kernel_model.cpu.traps import TrapDispatcher
from trapline import Sandbox
from trapline.probespec import parse_probe_spec

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "bin"
PROGRAMS = {"callchain": ("leaf", "inner", "middle", "outer", "spiral", "main"),
            "fork_probe": ("leaf", "work", "call_work", "main"),
            "vfork_probe": ("leaf", "work", "reap", "main"),
            "threads": ("worker", "add_to_counter", "thread_main", "main")}
SP = {"i386": "esp", "x86_64": "rsp"}


@st.composite
def probe_sets(draw):
    program = draw(st.sampled_from(sorted(PROGRAMS)))
    functions = draw(st.lists(st.sampled_from(PROGRAMS[program]), min_size=1, max_size=3,
                              unique=True))
    probes = [(function, draw(st.booleans()), draw(st.integers(0, 3))) for function in functions]
    return program, probes


def _run(arch, program, probes, *, native: bool, monkeypatch):
    """(stdout, exit code, records, what the actions saw, hits the C hook took)."""
    monkeypatch.setattr(TrapDispatcher, "native_breakpoints", native)
    made = []
    original = int3_sites.Int3Sites.__init__

    def recording_init(self, *args):
        original(self, *args)
        made.append(self)
    monkeypatch.setattr(int3_sites.Int3Sites, "__init__", recording_init)
    path = str(SAMPLES / arch / program)
    seen = []

    def action(ctx):
        seen.append((ctx.timestamp, ctx.pid, ctx.tid, ctx.address, ctx.args(2),
                     ctx.register(SP[arch]), ctx.register("eax" if arch == "i386" else "rax")))
    specs = [Probe(parse_probe_spec(f"uprobe:{path}:{function}"),
                   action=action if with_action else None, nargs=nargs)
             for function, with_action, nargs in probes]
    result = Sandbox(probes=specs, strategy="trampoline").run([path])
    return (result.stdout, result.exit_code, result.records, seen,
            sum(sites.taken for sites in made))


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
@settings(max_examples=6, deadline=None)
@given(case=probe_sets())
def test_the_c_hit_path_gives_what_the_python_path_gives(arch, case):
    program, probes = case
    with pytest.MonkeyPatch.context() as monkeypatch:
        native = _run(arch, program, probes, native=True, monkeypatch=monkeypatch)
    with pytest.MonkeyPatch.context() as monkeypatch:
        python = _run(arch, program, probes, native=False, monkeypatch=monkeypatch)
    assert native[:4] == python[:4]
    assert python[4] == 0
    records = len(native[2])
    event(f"{program}: {'hits' if records else 'no hit'}")
    # every probed function is called at least once by these programs
    assert records > 0 and native[4] > 0, (records, native[4])
