"""The profiler's other event sources (issue 18, US 7,823,129's "programmed performance monitor event
or other types of periodic events"): a sample every N taken branches or N page faults, in
virtual time and deterministic, both arches; and `profile:EVENT:N` as a `trapline trace` probe,
whose records carry pid, tid, the PC and, with `:stack`, the unwound stack."""
import json
from pathlib import Path

import pytest

from trapline.profile.session import run_profiled
from trapline.sandbox import Sandbox
from tests.e2e.forkserver import run_trapline

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT / "samples" / "bin"

pytestmark = pytest.mark.e2e


@pytest.fixture(params=["i386", "x86_64"])
def arch(request) -> str:
    return request.param


def _profile(argv, **options):
    return run_profiled(Sandbox(), [str(a) for a in argv], **options)


def test_every_nth_page_fault_is_a_sample_at_the_faulting_instruction(arch):
    run = _profile([SAMPLES / arch / "hotchain", "2", "60"], interval=7, event="faults")
    assert b"faults=60 " in run.result.stdout
    assert len(run.profile.samples) == 60 // 7
    for sample in run.profile.samples:
        assert sample.frames[0].name == "faults" and [f.name for f in sample.frames][1] == "main"
    again = _profile([SAMPLES / arch / "hotchain", "2", "60"], interval=7, event="faults")
    assert again.profile.samples == run.profile.samples            # deterministic


def test_taken_branches_sample_the_loops_and_are_deterministic(arch):
    argv = [SAMPLES / arch / "callchain", "40"]
    run = _profile(argv, interval=300, event="branches")
    plain = Sandbox().run([str(a) for a in argv])
    assert run.result.stdout == plain.stdout
    samples = run.profile.samples
    assert len(samples) > 20 and not run.profile.truncated()
    names = {s.frames[0].name for s in samples}
    assert "leaf" in names                         # the hot loop takes most branches
    assert [s.ts for s in samples] == sorted(s.ts for s in samples)
    assert _profile(argv, interval=300, event="branches").profile.samples == samples


def test_profile_probes_in_trace_carry_pid_tid_pc_and_the_stack():
    program = SAMPLES / "x86_64" / "callchain"
    done = run_trapline(["trace", "--format", "jsonl", "-p",
                         "profile:insn:5000:stack", str(program), "20"], timeout=300)
    assert done.returncode == 0, done.stderr.decode()
    records = [json.loads(line) for line in done.stdout.decode().splitlines() if line.startswith("{")]
    assert len(records) >= 5
    assert [r["ts"] for r in records] == [5000 * (i + 1) for i in range(len(records))]
    for record in records:
        assert record["pid"] == record["tid"] == 100 and record["addr"] > 0
        assert len(record["args"]) >= 2              # return addresses out to _start
    text = run_trapline(["trace", "-p", "profile:branches:400",
                         str(SAMPLES / "i386" / "hotchain"), "3", "1"], timeout=300)
    assert text.returncode == 0, text.stderr.decode()
    lines = [line for line in text.stdout.decode().splitlines() if "profile:branches:400" in line]
    tids = {line.split()[2] for line in lines}
    assert len(lines) > 5 and len(tids) == 3           # the main thread and both pthreads sampled
