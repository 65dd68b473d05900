"""Run options of trace in specs (issue 28: every run option): run.detach_on (trace
--detach-on: the tool leaves when the guest gets the signal) and run.enable_at/run.disable_at
(trace --enable-at/--disable-at: the probes record the hits inside the window of the clock)."""
import csv
import io

import pytest
from click.testing import CliRunner

from trapline.cli import main

DETACH_ON = """
name = "detach-on"
[program]
sample = "signals"
[run]
probes = ["uprobe:signals:main", "syscall:rt_sigaction", "syscall:kill"]
[sweep]
arch = ["i386", "x86_64"]
detach_on = ["", "SIGUSR1"]
"""
WINDOW = """
name = "window"
[program]
sample = "fib"
argv = ["15"]
[run]
probes = ["uprobe:fib:fib"]
max_insns = 1000000000
# emulate runs nothing in the guest: the clock the window is on is the unprobed program's, so
# the two halves add up (a trampoline's own instructions would move the hits' ts on)
strategy = "emulate"
[sweep]
arch = ["i386", "x86_64"]
zip = [{ enable_at = [0, 0, 20000], disable_at = [0, 20000, 0] }]
"""
FIB_15_CALLS = 1973


def _run(tmp_path, text: str) -> list[dict]:
    (tmp_path / "s.toml").write_text(text)
    result = CliRunner().invoke(main, ["experiment", "run", str(tmp_path / "s.toml"), "-o",
                                       str(tmp_path / "out"), "-j", "2"])
    assert result.exit_code == 0, result.output
    return list(csv.DictReader(io.StringIO((tmp_path / "out" / "results.csv").read_text())))


@pytest.mark.e2e
def test_detach_on_a_signal_leaves_the_rest_unrecorded(tmp_path):
    rows = _run(tmp_path, DETACH_ON)
    by = {(r["arch"], r["detach_on"]): r for r in rows}
    for arch in ("i386", "x86_64"):
        kept, left = by[(arch, "")], by[(arch, "SIGUSR1")]
        assert (kept["outcome"], left["outcome"], left["stdout_sha256"]) == \
            ("ok", "ok", kept["stdout_sha256"])
        # signals installs handlers with rt_sigaction before and after its kill(SIGUSR1)
        assert kept["hits_by_probe"] == "p0=1 p1=4 p2=1", kept
        assert left["hits_by_probe"] == "p0=1 p1=1 p2=1", left
        assert kept["detached_at"] == "" and int(left["detached_at"]) > 0


@pytest.mark.e2e
def test_the_probes_record_the_hits_inside_the_window(tmp_path):
    rows = _run(tmp_path, WINDOW)
    for arch in ("i386", "x86_64"):
        whole, before, after = [r for r in rows if r["arch"] == arch]
        assert int(whole["hits"]) == FIB_15_CALLS, whole
        assert 0 < int(before["hits"]) < FIB_15_CALLS and 0 < int(after["hits"]) < FIB_15_CALLS
        assert int(before["hits"]) + int(after["hits"]) == FIB_15_CALLS, (before, after)
