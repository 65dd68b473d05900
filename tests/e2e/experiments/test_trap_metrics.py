"""traps_taken and hooks_executed (issue 28), from the door's count of tool traps
(kernel_model/debug/traps.py): what each strategy makes the kernel take per hit -- an int3 whose
frame is elided for trampolines and jump pads, none at all for a jump pad's native action, a
LOCK site's #UD for emulate-lock, an int3 then a #DB for singlestep -- and one hook per hit."""
import csv
import io

import pytest
from click.testing import CliRunner

from trapline.cli import main

SPEC = """
name = "traps"
[program]
sample = "fib"
argv = ["10"]
[run]
probes = ["uprobe:fib:fib"]
max_insns = 1000000000
[sweep]
arch = ["i386", "x86_64"]
strategy = ["trampoline", "jump", "emulate", "emulate-lock", "singlestep"]
native = ["", "count"]
[metrics]
collect = ["hits", "traps_taken", "traps_by_kind", "hooks_executed"]
"""
FIB_10_CALLS = 177          # fib(10) calls fib 2 * F(11) - 1 times


def _expected_traps(strategy: str, native: str, hits: int) -> str:
    if strategy == "jump" and native:
        return ""                                   # the pad counts in the guest: no trap
    return {"trampoline": f"int3_fast={hits}", "jump": f"int3_fast={hits}",
            "emulate": f"int3={hits}", "emulate-lock": f"lock_ud={hits}",
            "singlestep": f"int3={hits} step_db={hits}"}[strategy]


@pytest.mark.e2e
def test_each_strategy_takes_its_traps_and_runs_one_hook_a_hit(tmp_path):
    (tmp_path / "t.toml").write_text(SPEC)
    out = tmp_path / "t"
    result = CliRunner().invoke(main, ["experiment", "run", str(tmp_path / "t.toml"), "-o", str(out),
                                       "-j", "2"])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO((out / "results.csv").read_text())))
    assert len(rows) == 20
    for row in rows:
        assert (row["outcome"], int(row["hits"])) == ("ok", FIB_10_CALLS), row
        assert int(row["hooks_executed"]) == FIB_10_CALLS, row
        kinds = _expected_traps(row["strategy"], row["native"], FIB_10_CALLS)
        assert row["traps_by_kind"] == kinds, row
        counts = [int(k.split("=")[1]) for k in kinds.split()]
        assert int(row["traps_taken"]) == sum(counts), row
