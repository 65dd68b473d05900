"""`profile --mode pc` counts its samples per PC in C (issue 31, the deterministic profiler's
cost): with the timer's histogram the profile holds tallies, and everything it prints or writes
without a timeline is what the per-sample profile gives — the report's every table, the folded
stacks, the DWARF lines — on both arches, with threads, forks and execs; the CLI uses it unless
-o asks for files with each sample's time."""
import io
import re
from pathlib import Path

import pytest
from rich.console import Console

from trapline.profile.exporters import chrome_trace, folded_text, speedscope
from trapline.profile.report import print_report
from trapline.profile.session import run_profiled
from trapline.sandbox import Sandbox
from tests.e2e.forkserver import run_trapline
from tests.quick_profile import alternates

from ..static_c import build_static
from .test_profile_lines import PROGRAM as HOTLINE

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT / "samples" / "bin"
PROGRAMS = (("fib", "22"), ("callchain", "200"), ("threads",), ("fork_pipe",), ("exec_chain",),
            ("spawn_tree",))

pytestmark = pytest.mark.e2e


@pytest.fixture(params=["i386", "x86_64"])
def arch(request) -> str:
    return request.param


def _report(profile) -> str:
    out = io.StringIO()
    print_report(profile, Console(file=out, width=120, highlight=False))
    return out.getvalue()


def _both(argv, interval: int):
    """The per-sample profile and the histogram's, of the same run."""
    return [run_profiled(Sandbox(), argv, interval=interval, mode="pc", histogram=histogram)
            for histogram in (False, True)]


def _same(each, counted) -> None:
    assert counted.result.stdout == each.result.stdout
    assert counted.result.exit_code == each.result.exit_code
    per_sample, tallied = each.profile, counted.profile
    # the histogram took ticks (the others came through the IDT: while several threads or
    # processes can run, a slice's quantum is counted by Unicorn, not by the block clock)
    assert not per_sample.tallies and tallied.tallies
    assert tallied.total == per_sample.total
    assert _report(tallied) == _report(per_sample)
    assert folded_text(tallied) == folded_text(per_sample)
    assert tallied.lines == per_sample.lines
    assert tallied.switches == per_sample.switches and tallied.interrupts == per_sample.interrupts


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p[0])
@alternates("arch")
def test_the_histogram_reports_what_each_sample_reports(arch, program):
    each, counted = _both([str(SAMPLES / arch / program[0]), *program[1:]], interval=3_001)
    _same(each, counted)
    if program[0] in ("fib", "callchain"):      # a loop's few PCs: a tally stands for many ticks
        assert counted.profile.tallied > 5 * len(counted.profile.tallies)


@pytest.fixture(scope="module")
def with_lines(tmp_path_factory):
    return build_static(tmp_path_factory, "hotline", HOTLINE, flags=("-g",))


def test_the_histogram_finds_the_same_lines(with_lines):
    each, counted = _both([str(with_lines)], interval=997)
    assert each.profile.lines                   # (DWARF lines found: the case this checks)
    _same(each, counted)


def test_files_on_a_timeline_need_each_sample(arch):
    counted = run_profiled(Sandbox(), [str(SAMPLES / arch / "fib"), "18"], interval=5_000, mode="pc",
                           histogram=True).profile
    assert counted.tallies and folded_text(counted)
    with pytest.raises(ValueError, match="each sample's time"):
        speedscope(counted, "fib")
    with pytest.raises(ValueError, match="each sample's time"):
        chrome_trace(counted)


@pytest.mark.parametrize("program", [("fib", "22"), ("threads",), ("exec_chain",)], ids=lambda p: p[0])
def test_the_cli_prints_the_same_report_with_and_without_files(arch, program, tmp_path):
    """Without -o the CLI profiles through the histogram; -o's speedscope and Chrome files need
    each sample, so it keeps them: the report is the same."""
    argv = ["profile", "--mode", "pc", "--interval", "3001", str(SAMPLES / arch / program[0]), *program[1:]]
    counted = run_trapline(argv, text=True, timeout=300)
    each = run_trapline([*argv[:5], "-o", str(tmp_path), *argv[5:]], text=True, timeout=300)
    assert counted.returncode == each.returncode == 0, counted.stderr
    assert counted.stdout == each.stdout
    files = re.compile(r"^trapline: (wrote|no flame graph).*\n", re.M)
    assert "samples" in counted.stderr and files.sub("", each.stderr) == counted.stderr


def test_the_status_line_moves_during_a_counted_run():
    """On a terminal the status line moves every STEP samples: the histogram hands its tallies
    over at least that often (fib makes no system call before its end, where a histogram
    drained only at kernel entries would hand everything over at once)."""
    from trapline.profile.progress import CLEAR, STEP, ProfileProgress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Terminal()
    run = run_profiled(Sandbox(), [str(SAMPLES / "x86_64" / "fib"), "25"], interval=1_000, mode="pc",
                       histogram=True, progress=ProfileProgress.for_terminal(out, "fib"))
    assert run.profile.tallies and run.profile.total >= 6 * STEP
    lines = [line for line in out.getvalue().split(CLEAR) if line]
    assert len(lines) == run.profile.total // STEP, lines
