"""The profile's line table (issue 18: "samples per ... function (and line when DWARF is
present)"): a static C program built with -g spends its time on one loop line of `hot`, and the
report names that line; a recorded trace carries the lines, so `trapline report` shows them
without the binary; a program without DWARF gets no line table."""
from pathlib import Path

import pytest

from trapline import Sandbox
from trapline.profile.lines import LineTable
from trapline.profile.record import read_trace
from trapline.profile.report import tables
from trapline.profile.session import run_profiled

from ..static_c import build_static
from tests.e2e.forkserver import run_trapline

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT / "samples" / "bin"

PROGRAM = r"""
#include <stdio.h>

__attribute__((noinline)) unsigned hot(unsigned n)
{
    unsigned acc = 0;
    for (unsigned i = 0; i < n; i++)
        acc = acc * 33 + (acc >> 7) + i;    /* HOT */
    return acc;
}

int main(void)
{
    unsigned total = 0;
    for (int k = 0; k < 300; k++)
        total += hot(3000 + k);
    printf("%u\n", total);
    return 0;
}
"""
# the lines of hot's loop: its `for` and its body
HOT_LINES = {PROGRAM.splitlines().index(line) + 1 for line in PROGRAM.splitlines()
             if "for (unsigned i" in line or "/* HOT */" in line}


@pytest.fixture(scope="module")
def with_lines(tmp_path_factory):
    return build_static(tmp_path_factory, "hotline", PROGRAM, flags=("-g",))


def test_the_hot_line_is_the_loop_of_hot(with_lines, tmp_path):
    run = run_profiled(Sandbox(), [str(with_lines)], interval=997, record=str(tmp_path / "t.jsonl"))
    profile = run.profile
    assert run.result.exit_code == 0 and profile.total > 100
    by_line = profile.self_by_line().most_common()
    (line, function, module), n = by_line[0]
    assert function == "hot" and module == "hotline"
    name, number = line.split(":")
    assert name == "hotline.c" and int(number) in HOT_LINES, by_line[:3]
    assert n > profile.total // 2
    assert tables(profile)[-1].title.startswith("Lines")
    # the recorded trace carries the lines: the report later needs no binary
    assert read_trace(str(tmp_path / "t.jsonl")).self_by_line() == profile.self_by_line()


def test_the_report_prints_the_line_table(with_lines, tmp_path):
    trace = tmp_path / "t.jsonl"
    done = run_trapline(["profile", "--interval", "997",
                         "--record", str(trace), str(with_lines)], text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "Lines (top" in done.stderr
    later = run_trapline(["report", str(trace)], text=True, timeout=300)
    assert later.returncode == 0 and later.stdout == done.stderr


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_a_program_without_dwarf_has_no_line_table(arch):
    assert not LineTable(str(SAMPLES / arch / "callchain"))
    profile = run_profiled(Sandbox(), [str(SAMPLES / arch / "callchain"), "20"], interval=2000).profile
    assert profile.total and not profile.lines
    assert not tables(profile)[-1].title.startswith("Lines")


def test_a_gcc_static_program_unwinds_without_eh_frame_hdr(with_lines):
    """gcc links -static programs without .eh_frame_hdr (no PT_GNU_EH_FRAME): the CFI is found
    as libgcc finds it at run time, from __EH_FRAME_BEGIN__ (loader/cfi.py), so no stack stops
    for want of CFI, and every sample in hot unwinds through glibc's start code to _start."""
    profile = run_profiled(Sandbox(), [str(with_lines)], interval=4999).profile
    assert profile.total > 100 and not profile.truncated()
    in_hot = [s for s in profile.samples if s.frames[0].name == "hot"]
    assert in_hot and all([f.name for f in s.frames] == ["hot", "main", "__libc_start_call_main",
                                                         "__libc_start_main", "_start"] for s in in_hot)
