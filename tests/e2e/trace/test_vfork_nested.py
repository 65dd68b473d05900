"""US 7,185,320 FIG. 1 exactly as the patent draws it, on samples/vfork_nested (both arches).

The tool traces the parent through the kernel's tracing facility with the fork/vfork event
flags. Under `--children naive` the children inherit trace control and the flags (FIG. 1: "child
process 40, which inherited trace control from parent process 30"), and the tool handles only
trace events that include the parent's pid (function 28): the parent's vfork (functions 32-38)
is handled, the child runs, and its own vfork (functions 42-46) stops the grandchild for an
event the tool ignores. The parent sleeps until its child is done, the child until its own child
is done, the grandchild waits for its tracer, and the tool for the parent ([0020]): the kernel
reports the deadlock, naming all four, instead of hanging. No breakpoint is involved: the child
calls no probed function before its vfork.

The patent's method runs the same program to completion: `follow` (every child traced, its
stops resumed, the grandchild's hits recorded under its pid) and `detach` with backpatching
(children untraced, the shared space backpatched at the grandchild's first hit, re-inserted at
vfork-done).
"""
import re
from collections import Counter
from pathlib import Path

import pytest

from kernel_model.kernel import Deadlock
from trapline import Sandbox
from tests.e2e.forkserver import run_trapline
from tests.quick_profile import alternates

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[3]
ARCHES = ("i386", "x86_64")
STRATEGIES = ("trampoline", "jump", "emulate")
PROBES = ["uprobe:vfork_nested:work", "uprobe:vfork_nested:leaf"]
EXPECTED = (ROOT / "samples" / "expected" / "vfork_nested.out").read_bytes()


def _sample(arch: str) -> str:
    return str(ROOT / "samples" / "bin" / arch / "vfork_nested")


def _records(result) -> Counter:
    return Counter((r.pid, r.probe.split(":")[-1]) for r in result.records)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("arch", ARCHES)
@alternates("arch")
def test_the_naive_tool_deadlocks_at_the_nested_vfork_event_as_fig1(arch, strategy):
    sandbox = Sandbox(probes=PROBES, strategy=strategy, children="naive")
    with pytest.raises(Deadlock) as info:
        sandbox.run([_sample(arch)])
    lines = [line.strip() for line in str(info.value).splitlines()]
    exe = re.escape(_sample(arch))
    assert lines[0] == "deadlock: nothing can run"
    assert re.fullmatch(rf"pid 100 tid 100 \({exe}\) sleeping, waiting for vfork child 101 to exec or exit",
                        lines[1])
    assert re.fullmatch(rf"pid 101 tid 101 \({exe}\) sleeping, waiting for vfork child 102 to exec or exit",
                        lines[2])
    assert re.fullmatch(rf"pid 102 tid 102 \({exe}\) stopped at the vfork event of pid 101 \(its parent\), "
                        r"waiting for its tracer", lines[3])
    assert lines[4:] == ["tool: trapline (naive monitor) waiting for trace events from the parent pid 100 only"]


@pytest.mark.parametrize("arch", ARCHES)
def test_the_cli_reports_the_fig1_deadlock_with_trapline_s_own_status(arch):
    done = run_trapline(["trace", *sum((["-p", p] for p in PROBES), []),
                         "--children", "naive", _sample(arch)], text=True, timeout=300)
    assert done.returncode == 124
    assert "trapline: deadlock: nothing can run" in done.stderr
    assert "stopped at the vfork event of pid 101 (its parent), waiting for its tracer" in done.stderr


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("arch", ARCHES)
@alternates("arch")
def test_follow_traces_every_level_and_the_program_runs_as_natively(arch, strategy):
    result = Sandbox(probes=PROBES, strategy=strategy, children="follow").run([_sample(arch)])
    assert (result.exit_code, result.stdout) == (0, EXPECTED)
    assert _records(result) == Counter({(100, "work"): 2, (100, "leaf"): 4,
                                        (102, "work"): 1, (102, "leaf"): 2})


@pytest.mark.parametrize("backpatch", ("lazy", "eager"))
@pytest.mark.parametrize("arch", ARCHES)
@alternates("arch")
def test_detach_with_backpatching_runs_it_and_records_the_parent_only(arch, backpatch):
    result = Sandbox(probes=PROBES, strategy="trampoline", children="detach",
                     backpatch=backpatch).run([_sample(arch)])
    assert (result.exit_code, result.stdout) == (0, EXPECTED)
    assert _records(result) == Counter({(100, "work"): 2, (100, "leaf"): 4})
    assert any("re-inserted 2 sites" in line for line in result.monitor)
