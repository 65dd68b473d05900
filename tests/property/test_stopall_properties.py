"""singlestep-stopall (US 7,350,196 [0005]) loses nothing and changes nothing, for random workers,
quanta and probed instructions, on both arches.

samples/loss_threads (pthreads) and samples/loss_procs (clone(CLONE_VM) processes sharing the
code) run WORKERS workers that each call probed() CALLS times without locks; probed() is
straight-line code, so a probe on ANY of its instructions must count WORKERS * CALLS hits.
The baseline singlestep loses hits there whenever a quantum ends inside its window
(tests/e2e/experiments/test_loss_experiment.py); with every other thread of the space held for the window,
nothing may be lost, the guest's output and exit status are the unprobed run's, and when the
run ends no thread is held and no site is left restored.
"""
from __future__ import annotations

import functools
from pathlib import Path

from elftools.elf.elffile import ELFFile
from hypothesis import given, strategies as st

from instrumenter.insn.decode import boundaries
from instrumenter.probes.definitions import Probe
from instrumenter.probes.records import Buffers
from instrumenter.tracing.session import Session
from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Kernel, KernelConfig, wait_status_exit_code
from trapline.probespec import parse_probe_spec

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "bin"
GUESTS = ("loss_threads", "loss_procs")


@functools.cache
def probed_offsets(arch: str, guest: str) -> tuple[int, ...]:
    """Offsets of the instruction starts of probed(), from the file."""
    with open(SAMPLES / arch / guest, "rb") as handle:
        elf = ELFFile(handle)
        symbol = elf.get_section_by_name(".symtab").get_symbol_by_name("probed")[0]
        address, size = symbol["st_value"], symbol["st_size"]
        offset = next(elf.address_offsets(address))
        handle.seek(offset)
        code = handle.read(size)
    return tuple(a - address for a in boundaries(code, address, arch))


def run(arch: str, guest: str, workers: int, calls: int, quantum: int, offset: int | None):
    """(exit code, stdout, hits, strategy) of one run; offset None: unprobed."""
    stdout = CapturedOutput(name=b"pipe:[1]")
    kernel = Kernel(KernelConfig(stdin=CapturedOutput(b""), stdout=stdout,
                                 stderr=CapturedOutput(name=b"pipe:[2]"), quantum=quantum))
    path = str(SAMPLES / arch / guest).encode()
    proc = kernel.spawn(path, [path, str(workers).encode(), str(calls).encode()], [])
    probe = session = None
    if offset is not None:
        probe = Probe(parse_probe_spec(f"uprobe:{guest}:probed+{offset}"), nargs=0)
        session = Session(kernel, [probe], buffers=Buffers(capacity=256, drain=lambda r: None),
                          strategy="singlestep-stopall")
        session.attach(proc)
    status = kernel.run(proc)
    strategy = session.strategies["singlestep-stopall"] if session else None
    return wait_status_exit_code(status), stdout.data, probe.hits if probe else None, strategy


@functools.cache
def unprobed(arch: str, guest: str, workers: int, calls: int, quantum: int):
    return run(arch, guest, workers, calls, quantum, None)[:2]


@given(arch=st.sampled_from(("i386", "x86_64")), guest=st.sampled_from(GUESTS),
       workers=st.integers(1, 5), calls=st.integers(1, 30), quantum=st.integers(1, 60),
       pick=st.integers(0, 31))
def test_stopall_loses_nothing_and_behaves_like_unprobed(arch, guest, workers, calls, quantum,
                                                          pick):
    offsets = probed_offsets(arch, guest)
    offset = offsets[pick % len(offsets)]
    exit_code, stdout, hits, strategy = run(arch, guest, workers, calls, quantum, offset)
    assert (exit_code, stdout) == unprobed(arch, guest, workers, calls, quantum)
    assert hits == workers * calls
    assert strategy.windows == hits                      # one held window per hit
    assert strategy.holds == {} and strategy.stepping == {}
    # every window held the other threads of the space for at least the stepped instruction
    assert (strategy.held_thread_insns > 0) == (hits > 0)


def test_a_stepped_instruction_that_faults_ends_its_window():
    """samples/signals writes through NULL in check_segv_longjmp and its SIGSEGV handler
    siglongjmps out: probed there, the stepped store faults inside the window, the handler
    frame ends it (int3 back, nobody held) and the program runs on as unprobed."""
    for arch, offset in (("i386", 57), ("x86_64", 58)):
        stdout = CapturedOutput(name=b"pipe:[1]")
        kernel = Kernel(KernelConfig(stdin=CapturedOutput(b""), stdout=stdout,
                                     stderr=CapturedOutput(name=b"pipe:[2]")))
        path = str(SAMPLES / arch / "signals").encode()
        proc = kernel.spawn(path, [path], [])
        probe = Probe(parse_probe_spec(f"uprobe:signals:check_segv_longjmp+{offset}"), nargs=0)
        session = Session(kernel, [probe], strategy="singlestep-stopall")
        session.attach(proc)
        site = session.resolve(proc, probe)
        assert kernel.debug.patch_at(proc, site) is not None        # the int3 is in
        status = kernel.run(proc)
        strategy = session.strategies["singlestep-stopall"]
        assert wait_status_exit_code(status) == 0, stdout.data
        assert b"c. SIGSEGV from a NULL write: handler ran 1 time(s)" in stdout.data
        assert (probe.hits, strategy.windows, strategy.aborted) == (1, 1, 1)
        assert strategy.holds == {} and strategy.stepping == {}
