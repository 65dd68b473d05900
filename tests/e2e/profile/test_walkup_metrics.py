"""The walk-up's metrics on their clocks (kernel_model/time/cpu_time.py): instructions are the hooked
thread's own, so a function's exclusive count does not depend on how the scheduler interleaves
the threads; virtual time moves with the instructions between system calls, so compute-only code
has a time, equal to its instructions, and code that makes system calls adds their cost."""
import dataclasses
from pathlib import Path

import pytest

from tests.e2e.rooted import rooted
from trapline.profile.walkup_run import run_full

SAMPLES = Path(__file__).resolve().parents[3] / "samples" / "bin"

pytestmark = pytest.mark.e2e


@pytest.fixture(params=["i386", "x86_64"])
def arch(request) -> str:
    return request.param


def _metrics(argv, **options) -> dict:
    sandbox, argv = rooted(argv)
    _, full = run_full(dataclasses.replace(sandbox, **options), argv)
    return {e.function.name: e.metric for e in full.callers}


def test_a_threads_own_instructions_do_not_depend_on_the_schedule(arch):
    """hotchain's three threads run `hot` and `dig`; with a short quantum they are switched out
    inside them. Their exclusive instructions are their own either way (with the process's
    clock, the other threads' slices were counted in: 96768 vs 99768 on x86-64)."""
    argv = [SAMPLES / arch / "hotchain", "30", "5"]
    long, short = _metrics(argv), _metrics(argv, quantum=3_000)
    for name in ("hot", "dig"):
        assert long[name].invocations == short[name].invocations
        assert long[name].insns_exclusive == short[name].insns_exclusive, name


def test_compute_only_code_takes_virtual_time_and_system_calls_add_theirs(arch):
    metric = _metrics([SAMPLES / arch / "callchain", "50"])
    for name in ("leaf", "inner", "middle", "outer"):           # no system call below them
        assert metric[name].time_inclusive == metric[name].insns_inclusive > 0, name
        assert metric[name].time_exclusive == metric[name].insns_exclusive, name
    main = metric["main"]                                       # main's printf writes
    assert main.time_inclusive - main.insns_inclusive >= 1_000
