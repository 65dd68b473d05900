"""The scheduler's quantum ends at a block boundary (emu/quantum_clock.py, issue 31): threads or
processes that compute side by side run without Unicorn's per-instruction counting hook, each
preempted slice charged the instructions it began (a few past the quantum), deterministically;
the profiling timer cuts such a slice into pieces without moving where it ends."""
from pathlib import Path

import pytest

from emu.machine import Machine
from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Kernel, KernelConfig

SAMPLES = Path(__file__).resolve().parents[4] / "samples" / "bin"
QUANTUM = 5_000
EXPECTED = b"workers=3 fib(20)=6765 sum=20295\n"


class Slices:
    """Every Machine.run of the kernel's loop: (count, kind, what it ran, Unicorn's hook on)."""

    def __init__(self, monkeypatch):
        self.seen = []
        run = Machine.run

        def recorded(machine, begin, **kw):
            exit_ = run(machine, begin, **kw)
            self.seen.append((kw.get("count", 0), exit_.kind, machine.last_run_insns,
                              machine._count_hook))
            return exit_
        monkeypatch.setattr(Machine, "run", recorded)


def _run(arch, mode, *, interval=None, quantum=QUANTUM):
    out = CapturedOutput(name=b"out")
    kernel = Kernel(KernelConfig(stdout=out, stderr=out, quantum=quantum))
    proc = kernel.spawn(str(SAMPLES / arch / "quantum").encode(),
                        [b"quantum", mode.encode(), b"3", b"20"], [])
    if interval:
        kernel.debug.arm_timer(interval)
    status = kernel.run(proc)
    ticks = kernel.debug.timer_ticks() if interval else 0
    return (status, out.data, kernel.clock.elapsed_ns, kernel.insns_used), ticks

@pytest.mark.parametrize("mode", ["threads", "fork"])
def test_quanta_end_at_block_boundaries_without_unicorns_count(arch, mode, monkeypatch):
    slices = Slices(monkeypatch)
    (status, out, *_), _ = _run(arch, mode)
    assert (status, out) == (0, EXPECTED)
    preempted = [ran for count, kind, ran, _ in slices.seen if kind == "budget"]
    assert len(preempted) > 20                           # they took turns many times
    assert all(QUANTUM <= ran < QUANTUM + 64 for ran in preempted)    # fib's blocks are short
    assert any(ran > QUANTUM for ran in preempted)       # not Unicorn's exact stop
    assert not any(hook for *_, hook in slices.seen)     # its hook never installed


def test_the_same_run_is_scheduled_the_same(arch, monkeypatch):
    runs = []
    for _ in range(2):
        with monkeypatch.context() as patch:
            slices = Slices(patch)
            runs.append((_run(arch, "threads")[0], slices.seen))
    assert runs[0] == runs[1] and len(runs[0][1]) > 20


@pytest.mark.parametrize("mode", ["threads", "fork"])
def test_the_timer_does_not_move_where_a_quantum_ends(arch, mode):
    """The profiler's case (nothing counts every instruction): ticks every 3 001 instructions
    cut the slices into pieces on the block clock; the clock and the charge are the plain
    run's, so the schedule is."""
    plain, _ = _run(arch, mode)
    timed, ticks = _run(arch, mode, interval=3_001)
    assert plain == timed and plain[:2] == (0, EXPECTED)
    assert ticks > plain[3] // 3_001 // 2                # ticks were taken all along
