"""US 7,185,320 FIG. 1 reproduced on purpose: with the naive monitor (it waits for the traced
parent's events only), vfork_status's vfork child reaches the probed child_work, stops for a
tracer that never looks, the parent sleeps until the child execs or exits, and the tool waits
for the parent. The run ends with the kernel's deadlock report naming all three, never hangs;
the patent's tool (--children detach) runs the same program to completion.
"""
import re
from pathlib import Path

import pytest

from kernel_model.kernel import Deadlock
from trapline import Sandbox
from tests.e2e.forkserver import run_trapline
from tests.quick_profile import alternates

ROOT = Path(__file__).resolve().parents[3]
ARCHES = ("i386", "x86_64")
PROBE = "uprobe:vfork_status:child_work"


def _sample(arch: str) -> str:
    return str(ROOT / "samples" / "bin" / arch / "vfork_status")


def _report_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines()]


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("strategy", ["trampoline", "jump", "emulate-lock"])
@alternates("arch")
def test_the_naive_monitor_deadlocks_as_fig1_and_the_report_names_all_three(arch, strategy):
    sandbox = Sandbox(probes=[PROBE], strategy=strategy, children="naive")
    with pytest.raises(Deadlock) as info:
        sandbox.run([_sample(arch)])
    lines = _report_lines(str(info.value))
    assert lines[0] == "deadlock: nothing can run"
    parent, child, tool = lines[1:]
    assert re.fullmatch(r"pid 100 tid 100 \(.*vfork_status\) sleeping, waiting for vfork child 101 "
                        r"to exec or exit", parent)
    # jump: the trap is the int3 part in the trampoline that the site's jump leads to.
    site = r"0x[0-9a-f]+ \((child_work|the trampoline of child_work at 0x[0-9a-f]+)\)"
    assert re.fullmatch(rf"pid 101 tid 101 \(.*vfork_status\) stopped at breakpoint {site}, "
                        r"waiting for its tracer", child)
    assert tool == "tool: trapline (naive monitor) waiting for trace events from the parent pid 100 only"


@pytest.mark.parametrize("arch", ARCHES)
def test_the_cli_prints_the_deadlock_and_fails(arch):
    done = run_trapline(["trace", "-p", PROBE,
                         "--children", "naive", _sample(arch)], text=True, timeout=120)
    assert done.returncode != 0
    assert "trapline: deadlock: nothing can run" in done.stderr
    assert "waiting for its tracer" in done.stderr and "naive monitor" in done.stderr


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("backpatch", ["lazy", "eager"])
@alternates("arch")
def test_the_seeds_tool_runs_the_same_program_to_completion(arch, backpatch):
    result = Sandbox(probes=[PROBE], strategy="trampoline", children="detach",
                     backpatch=backpatch).run([_sample(arch)])
    assert result.exit_code == 0
    assert result.stdout.endswith(b"vfork_status: ok\n")
    assert [r.pid for r in result.records] == [100, 100]
    assert any("re-inserted" in line for line in result.monitor)


def test_bad_children_and_backpatch_values_are_one_line_usage_errors():
    from trapline.errors import UsageError
    with pytest.raises(UsageError, match=r"^--children adopt: expected one of follow, detach, naive$"):
        Sandbox(probes=[PROBE], children="adopt").run([_sample("x86_64")])
    with pytest.raises(UsageError, match=r"^--backpatch later: expected one of lazy, eager$"):
        Sandbox(probes=[PROBE], backpatch="later").run([_sample("x86_64")])
