"""A quantum that ends at a block boundary (emu/quantum_clock.py) is deterministic, for any
quantum, workers and work: threads or forked processes computing side by side print the inline
run's line, the same run twice is scheduled slice for slice the same, and every preempted slice
ran its quantum and at most the block that reached it."""
from pathlib import Path
from unittest import mock

from hypothesis import given, settings, strategies as st

from emu import exits
from emu.machine import Machine
from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Kernel, KernelConfig

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "bin"
FIB = {12: 144, 14: 377, 16: 987, 18: 2584}


def _scheduled(arch, mode, workers, n, quantum):
    """(status, output, the slices: (pid, tid, count, exit kind, what ran))."""
    out = CapturedOutput(name=b"out")
    kernel = Kernel(KernelConfig(stdout=out, stderr=out, quantum=quantum))
    proc = kernel.spawn(str(SAMPLES / arch / "quantum").encode(),
                        [b"quantum", mode.encode(), str(workers).encode(), str(n).encode()], [])
    slices, run = [], Machine.run

    def recorded(machine, begin, **kw):
        exit_ = run(machine, begin, **kw)
        thread = kernel.current
        slices.append((thread.process.pid, thread.tid, kw.get("count", 0), exit_.kind,
                       machine.last_run_insns))
        return exit_
    with mock.patch.object(Machine, "run", recorded):
        status = kernel.run(proc)
    return status, out.data, slices


@settings(max_examples=max(settings().max_examples, 20))
@given(arch=st.sampled_from(["i386", "x86_64"]), mode=st.sampled_from(["threads", "fork"]),
       workers=st.integers(2, 3), n=st.sampled_from(sorted(FIB)),
       quantum=st.integers(300, 20_000))
def test_a_block_quantum_schedules_the_same_run_the_same(arch, mode, workers, n, quantum):
    first = _scheduled(arch, mode, workers, n, quantum)
    assert first == _scheduled(arch, mode, workers, n, quantum)
    status, out, slices = first
    assert status == 0
    assert out == f"workers={workers} fib({n})={FIB[n]} sum={workers * FIB[n]}\n".encode()
    preempted = [(count, ran) for *_, count, kind, ran in slices if kind == exits.BUDGET]
    assert preempted                                      # the interesting case: they shared
    assert all(count <= ran < count + 64 for count, ran in preempted)
