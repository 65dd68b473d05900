"""Address spaces are freed (issue 12) and probes survive it: random process trees with probes,
exec and exit, every probe hit in every new process.

Spaces are released as processes exit or exec, their Machines go back to the kernel's pool and
come out again for later forks and execs (kernel_model/memory/space_pool.py), and every tool table is
keyed by a space's serial. For random probe sets, random trees of forkscript (calls, forks,
vforks, execs, exits), each strategy, and pools of 0, 1 and 4 Machines:
- every process's records equal the calls it made (a recycled Machine, or a reused id, never
  makes a tool believe a new space is already patched);
- every image hashes its probed code as instrumented (the kept text of a recycled Machine got
  the patches of the process that took it, or the pristine image then the tool's patches);
- every space is announced released exactly once, and at the end no tool table (nor the debug
  interface's handler tables) still names any space.
"""
from __future__ import annotations

import io
from collections import Counter

from hypothesis import given, strategies as st

from instrumenter.probes.definitions import Probe
from instrumenter.probes.records import Buffers
from instrumenter.tracing.session import Session
from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Kernel, KernelConfig
from kernel_model.memory.space import Space
from trapline.probespec import parse_probe_spec

from trapline.testing.forkscript import Output, argv, scripts
from .test_children_properties import (ARCHES, SAMPLES, expected_records, fnv1a, probe_sets,
                                       probed_section, recorded, spec_text)


class Lifetimes:
    """Serials of the spaces created during the run, and of those announced released."""

    def __init__(self):
        self.created: list[int] = []
        self.released: list[int] = []

    def space_released(self, space):
        self.released.append(space.serial)


def run(arch, steps, specs, strategy, pool):
    lifetimes = Lifetimes()
    original_init = Space.__init__

    def recording_init(space, *args, **kwargs):
        original_init(space, *args, **kwargs)
        lifetimes.created.append(space.serial)

    Space.__init__ = recording_init
    try:
        stdout = CapturedOutput()
        kernel = Kernel(KernelConfig(stdin=CapturedOutput(), stdout=stdout,
                                     stderr=CapturedOutput(), report=io.StringIO(),
                                     space_pool=pool))
        path = str(SAMPLES / arch / "forkscript")
        proc = kernel.spawn(path.encode(), [a.encode() for a in [path, *argv(steps)]], [])
        kernel.debug.subscribe(lifetimes)
        records = []
        session = Session(kernel, [Probe(parse_probe_spec(s)) for s in specs],
                          buffers=Buffers(drain=records.extend), strategy=strategy)
        session.attach(proc)
        status = kernel.run(proc)
        session.flush()
    finally:
        Space.__init__ = original_init
    return status, stdout.data, records, kernel, session, lifetimes


def serials_in_tables(kernel, session) -> set[int]:
    """Every space serial a table of the tool or of the debug interface still holds."""
    serials = set()
    traps, patches = kernel.debug._traps, kernel.debug._patches     # the door's parts' tables
    for table in (traps._breakpoints, traps._invalid_opcodes):
        serials |= {key[0] for key in table}
    serials |= set(traps._debug_traps) | set(traps._gates) | set(patches._patches or ())
    for strategy in session.strategies.values():
        serials |= {key[0] for key in getattr(strategy, "sites", {})}
    jumps = session.jumps
    serials |= {key[0] for key in jumps.parts} | set(jumps.data) | set(jumps.owners)
    serials |= set(jumps.natives.spaces) | set(jumps.expected)
    serials |= set(session.trampolines.xols)
    serials |= set(session.returns.landings)
    return serials


@given(data=st.data(), arch=st.sampled_from(ARCHES),
       strategy=st.sampled_from(["trampoline", "emulate", "auto"]),   # auto: jumps where they fit
       pool=st.sampled_from([0, 1, 4]))
def test_probes_hit_in_every_process_while_spaces_are_freed_and_recycled(data, arch, strategy,
                                                                         pool):
    sites = sorted(set(data.draw(probe_sets(arch), label="probes")))
    if strategy == "emulate":       # emulate takes entry probes on instructions it emulates
        sites = [s for s in sites if s[0] == "uretprobe" or s[2] == 0] or [("uretprobe", "probed_a", 0)]
    steps = data.draw(scripts(max_depth=3, vfork_children_flat=False), label="script")
    specs = [spec_text(site) for site in sites]
    status, stdout, records, kernel, session, lifetimes = run(arch, steps, specs, strategy, pool)
    assert status == 0, stdout
    out = Output(stdout)

    actual = {pid: expected_records(calls, sites) for pid, calls in out.calls_per_pid().items()}
    assert recorded(records, sites) == {pid: c for pid, c in actual.items() if c}

    unprobed = fnv1a(probed_section(arch)[1])
    for label, hashes in out.hashes.items():
        assert all(h != unprobed for h in hashes), (label, hashes)

    assert sorted(lifetimes.released) == sorted(lifetimes.created)     # each exactly once
    assert serials_in_tables(kernel, session) == set()
    assert kernel.space_pool.recycled <= len(lifetimes.created)
