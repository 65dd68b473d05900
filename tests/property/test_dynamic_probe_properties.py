"""Probes enabled and disabled at random instruction counts (instrumenter/tracing/dynamic.py)
never lose or double-count a hit and never free out-of-line code a thread can still run.

samples/loss_threads runs WORKERS threads calling probed() CALLS times at a random quantum, so
threads are often preempted between a probe's int3 and the end of its trampoline. Probes, all
placed by the trampoline strategy:
  A  always on, at a random instruction of probed();
  B  at the same address (written as uprobe:BIN:0xADDR), on from E to D: it must record
     exactly A's hits with E < ts <= D, at the same timestamps — nothing lost, nothing twice;
  C  1..4 probes at random instructions of probed() (straight-line code: each runs once per
     call), each on during its own random window, so their trampolines are freed while other threads may be inside them and reused
     by the next C enabled: each C runs once per call as A does, so its count is A's count in
     its window give or take one call per thread at each end of the window.
Every slot the session gives back is checked independently at that moment: no thread of the
space has its PC inside it (read through the debug interface's register access). And the guest
computes what it computes unprobed.
"""
from __future__ import annotations

import functools
import io
from pathlib import Path

from elftools.elf.elffile import ELFFile
from hypothesis import event, given, strategies as st

from instrumenter.insn.decode import boundaries
from instrumenter.probes.definitions import Probe
from instrumenter.probes.records import Buffers
from instrumenter.tracing.session import Session
from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Kernel, KernelConfig, wait_status_exit_code
from trapline.probespec import parse_probe_spec

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "bin"
GUEST = "loss_threads"
HORIZON = 9000          # instruction counts drawn for the windows (runs are ~2k-10k long)
SLOT = 64               # a trampoline's slot (instrumenter/tracing/dynamic.py)


@functools.cache
def instructions(arch: str, function: str) -> tuple[int, ...]:
    """Addresses of the instruction starts of `function`, from the file."""
    with open(SAMPLES / arch / GUEST, "rb") as handle:
        elf = ELFFile(handle)
        symbol = elf.get_section_by_name(".symtab").get_symbol_by_name(function)[0]
        address, size = symbol["st_value"], symbol["st_size"]
        handle.seek(next(elf.address_offsets(address)))
        return tuple(boundaries(handle.read(size), address, arch))


def _window(draw):
    start = draw(st.integers(0, HORIZON))
    end = draw(st.one_of(st.none(), st.integers(start, HORIZON + 2000)))
    return start, end


@st.composite
def scenarios(draw):
    arch = draw(st.sampled_from(("i386", "x86_64")))
    probed = instructions(arch, "probed")
    a = draw(st.sampled_from(probed))
    cs = draw(st.lists(st.tuples(st.sampled_from(probed), st.builds(lambda: None)),
                       min_size=1, max_size=4))
    return dict(arch=arch, workers=draw(st.integers(1, 4)), calls=draw(st.integers(3, 25)),
                quantum=draw(st.integers(1, 60)), a=a, b=_window(draw),
                cs=[(address, _window(draw)) for address, _ in cs])


def _run(arch, workers, calls, quantum, probes=()):
    stdout = CapturedOutput(name=b"pipe:[1]")
    kernel = Kernel(KernelConfig(stdin=CapturedOutput(b""), stdout=stdout,
                                 stderr=CapturedOutput(), report=io.StringIO(), quantum=quantum))
    path = str(SAMPLES / arch / GUEST).encode()
    proc = kernel.spawn(path, [path, str(workers).encode(), str(calls).encode()], [])
    records, session = [], None
    if probes:
        session = Session(kernel, list(probes), buffers=Buffers(drain=records.extend),
                          strategy="trampoline")
        _check_every_slot_given_back(kernel, proc, session)
        session.attach(proc)
    status = kernel.run(proc)
    if session is not None:
        session.flush()
    return wait_status_exit_code(status), stdout.data, records, session


def _check_every_slot_given_back(kernel, proc, session) -> None:
    """Wrap the reclaim: each slot it gives back holds no thread's PC right then."""
    debug, reclaim = kernel.debug, session.dynamic.reclaim
    pc = debug.arch(proc).pc

    def checked():
        given = reclaim()
        pcs = [debug.read_register(t, pc) for t in debug.space_threads(proc)]
        for slot in given:
            assert not any(slot <= p < slot + SLOT for p in pcs), (hex(slot), pcs)
        return given
    session.dynamic.reclaim = checked


def _probe(text, window=(0, None)):
    return Probe(parse_probe_spec(text), nargs=0, enable_at=window[0], disable_at=window[1])


@given(scenarios())
def test_probes_switched_at_random_counts_count_exactly(scenario):
    arch, a = scenario["arch"], scenario["a"]
    base = instructions(arch, "probed")[0]
    probe_a = _probe(f"uprobe:{GUEST}:probed+{a - base}")
    probe_b = _probe(f"uprobe:{GUEST}:{a:#x}", scenario["b"])
    probes_c = [_probe(f"uprobe:{GUEST}:{address:#x}", window)
                for address, window in scenario["cs"]]
    # the same address twice must be two spellings, so that records tell A and B apart
    texts = [p.spec.text for p in [probe_a, probe_b, *probes_c]]
    probes_c = [p for p, t in zip(probes_c, texts[2:]) if t not in texts[:2]]
    run = (arch, scenario["workers"], scenario["calls"], scenario["quantum"])
    exit_code, stdout, records, session = _run(*run, [probe_a, probe_b, *probes_c])
    assert (exit_code, stdout) == _run(*run)[:2]
    a_times = [r.ts for r in records if r.probe == probe_a.spec.text]
    assert len(a_times) == probe_a.hits == scenario["workers"] * scenario["calls"]
    start, end = scenario["b"]
    expected = [ts for ts in a_times if start < ts and (end is None or ts <= end)]
    assert sorted(r.ts for r in records if r.probe == probe_b.spec.text) == sorted(expected)
    for probe in probes_c:
        start, end = probe.enable_at, probe.disable_at
        in_window = sum(1 for ts in a_times if start < ts and (end is None or ts <= end))
        assert abs(probe.hits - in_window) <= 2 * scenario["workers"], (probe, in_window)
    event(f"slots given back: {min(len(session.dynamic.released), 3)}")
    event(f"slots still deferred at the end: {min(len(session.dynamic.deferred), 1)}")
