"""The loss experiment (US 7,350,196 [0006] vs [0046]): with several workers — threads, or processes
sharing the code — running through the probed function, the strategies that never take their
patch out record every hit; the restore-and-single-step baseline loses hits whenever a quantum
ends inside its window, and the stop-all variant (US 7,350,196 [0005]) loses none by holding every
other thread for the window, at a cost the "held" column counts. The documented configuration (docs/guide/emulate.md, the loss experiment): 4 workers x 100
calls, quanta 7 and 50."""
import pytest
from click.testing import CliRunner

from trapline.experiments.loss import (GUESTS, available_strategies, guest_binary,
                                          run_experiment, run_once)
from trapline.cli import main

from ..samples.test_samples_run import SAMPLES
from tests.quick_profile import alternates

ARCHES = ("i386", "x86_64")
LOSSLESS = [s for s in available_strategies() if s != "singlestep"]
WORKERS, CALLS, QUANTA = 4, 100, (7, 50)


def _binary(arch: str, guest: str = "threads") -> str:
    return guest_binary(str(SAMPLES), arch, guest)


@pytest.mark.e2e
@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("guest", GUESTS)
@pytest.mark.parametrize("strategy", LOSSLESS)
@alternates("arch")
def test_strategies_that_keep_the_patch_lose_nothing(arch, guest, strategy):
    assert {"emulate", "emulate-lock", "trampoline", "jump", "singlestep-stopall"} <= set(LOSSLESS)
    for quantum in QUANTA:
        row = run_once(_binary(arch, guest), arch, strategy, WORKERS, quantum, CALLS, guest=guest)
        assert (row.expected, row.recorded, row.lost, row.exit_code) == (400, 400, 0, 0), row
        # only the stop-all scheme holds threads: at least one other each of its 400 windows
        assert (row.held >= 400) if strategy == "singlestep-stopall" else row.held == 0, row


@pytest.mark.e2e
@pytest.mark.parametrize("guest", GUESTS)
def test_stopall_holds_the_others_for_the_stepped_instruction(guest):
    """One worker: each window holds the one other thread of the space (the main thread,
    joining or waiting) for the one stepped instruction."""
    row = run_once(_binary("x86_64", guest), "x86_64", "singlestep-stopall", 1, 7, CALLS,
                   guest=guest)
    assert (row.lost, row.held) == (0, CALLS), row


@pytest.mark.e2e
@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("guest", GUESTS)
@alternates("arch")
def test_singlestep_loses_hits_with_several_workers(arch, guest):
    """Every quantum of the documented configuration loses hits with threads; with processes
    quantum 7 does on both arches (at 50, x86-64's workers happen never to be switched inside
    the window: 0 lost, see the table in docs/guide/emulate.md)."""
    rows = [run_once(_binary(arch, guest), arch, "singlestep", WORKERS, q, CALLS, guest=guest)
            for q in QUANTA]
    must_lose = QUANTA if guest == "threads" else (7,)
    for row in rows:
        assert row.exit_code == 0 and row.lost < row.expected, row          # lost, not broken
        assert row.lost > 0 or row.quantum not in must_lose, row


@pytest.mark.e2e
@pytest.mark.parametrize("guest", GUESTS)
def test_singlestep_loses_nothing_with_one_worker(guest):
    """The loss comes from other workers in the window, not from the stepping itself."""
    row = run_once(_binary("x86_64", guest), "x86_64", "singlestep", 1, 7, CALLS, guest=guest)
    assert row.lost == 0 and row.recorded == CALLS


@pytest.mark.e2e
def test_the_experiment_is_deterministic_apart_from_wall_time():
    seen = []
    runs = [run_experiment(str(SAMPLES), ["x86_64"], list(GUESTS), ["emulate", "singlestep"],
                           [2, 3], [5], 60, progress=lambda *a: seen.append(a[:2]))
            for _ in range(2)]
    assert [r.deterministic() for r in runs[0]] == [r.deterministic() for r in runs[1]]
    assert seen == [(i, 8) for i in range(1, 9)] * 2          # one progress call per run
    assert len(runs[0]) == 8 and any(r.lost for r in runs[0])


@pytest.mark.e2e
def test_cli_prints_the_table():
    result = CliRunner().invoke(main, ["experiment", "loss", "--arch", "i386", "--strategy",
                                       "emulate-lock", "--workers", "2", "--quanta", "7",
                                       "--calls", "20"])
    assert result.exit_code == 0, result.output
    header, rule, *rows = result.output.splitlines()
    assert header.split()[:8] == ["arch", "guest", "strategy", "workers", "quantum", "expected",
                                  "recorded", "lost"]
    assert [row.split()[:8] for row in rows] == [
        ["i386", guest, "emulate-lock", "2", "7", "40", "40", "0"] for guest in GUESTS]


@pytest.mark.e2e
def test_cli_rejects_a_bad_quantum_list():
    result = CliRunner().invoke(main, ["experiment", "loss", "--quanta", "7,x"])
    assert result.exit_code != 0 and "comma-separated numbers" in result.output
