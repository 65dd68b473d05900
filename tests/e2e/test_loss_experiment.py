"""The loss experiment (seed 001 [0006] vs [0046]): with several threads running through the
probed function, the strategies that never take their patch out record every hit; the
restore-and-single-step baseline loses hits whenever a quantum ends inside its window. The
documented configuration (README.md, "Probe loss"): 4 threads x 100 calls, quanta 7 and 50."""
import pytest
from click.testing import CliRunner

from instrumenter.experiment_loss import available_strategies, run_experiment, run_once
from trapline.cli import main

from .test_samples_run import SAMPLES

ARCHES = ("i386", "x86_64")
LOSSLESS = [s for s in available_strategies() if s != "singlestep"]
THREADS, CALLS, QUANTA = 4, 100, (7, 50)


def _binary(arch: str) -> str:
    return str(SAMPLES / arch / "loss_threads")


@pytest.mark.e2e
@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("strategy", LOSSLESS)
def test_strategies_that_keep_the_patch_lose_nothing(arch, strategy):
    assert {"emulate", "emulate-lock", "trampoline"} <= set(LOSSLESS)
    for quantum in QUANTA:
        row = run_once(_binary(arch), arch, strategy, THREADS, quantum, CALLS)
        assert (row.expected, row.recorded, row.lost, row.exit_code) == (400, 400, 0, 0), row


@pytest.mark.e2e
@pytest.mark.parametrize("arch", ARCHES)
def test_singlestep_loses_hits_with_several_threads(arch):
    rows = [run_once(_binary(arch), arch, "singlestep", THREADS, q, CALLS) for q in QUANTA]
    for row in rows:
        assert row.exit_code == 0 and 0 < row.lost < row.expected, row     # lost, not broken


@pytest.mark.e2e
def test_singlestep_loses_nothing_with_one_thread():
    """The loss comes from other threads in the window, not from the stepping itself."""
    row = run_once(_binary("x86_64"), "x86_64", "singlestep", 1, 7, CALLS)
    assert row.lost == 0 and row.recorded == CALLS


@pytest.mark.e2e
def test_the_experiment_is_deterministic_apart_from_wall_time():
    binaries = {"x86_64": _binary("x86_64")}
    runs = [run_experiment(binaries, ["emulate", "singlestep"], [2, 3], [5], 60)
            for _ in range(2)]
    assert [r.deterministic() for r in runs[0]] == [r.deterministic() for r in runs[1]]
    assert len(runs[0]) == 4 and any(r.lost for r in runs[0])


@pytest.mark.e2e
def test_cli_prints_the_table():
    result = CliRunner().invoke(main, ["experiment", "loss", "--arch", "i386", "--strategy",
                                       "emulate-lock", "--threads", "2", "--quanta", "7",
                                       "--calls", "20"])
    assert result.exit_code == 0, result.output
    header, rule, row = result.output.splitlines()
    assert header.split()[:7] == ["arch", "strategy", "threads", "quantum", "expected",
                                  "recorded", "lost"]
    assert row.split()[:7] == ["i386", "emulate-lock", "2", "7", "40", "40", "0"]


@pytest.mark.e2e
def test_cli_rejects_a_bad_quantum_list():
    result = CliRunner().invoke(main, ["experiment", "loss", "--quanta", "7,x"])
    assert result.exit_code != 0 and "comma-separated numbers" in result.output
