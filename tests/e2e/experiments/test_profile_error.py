"""The profile-error experiment (issue 28: sampling interval vs profile error vs cost): the exact
profile samples every instruction but the exit call's, a fine interval is closer to it than a
coarse one, and a point's figures are the same on every run (verify)."""
import csv
import io

import pytest
from click.testing import CliRunner

from trapline.cli import main

SPEC = """
name = "profile-small"
[program]
sample = "callchain"
argv = ["5"]
[profile]
[sweep]
arch = ["i386", "x86_64"]
mode = ["pc", "stack"]
interval = [10, 1000]
[[plots]]
name = "error"
x = "interval"
y = "profile_error"
series = "mode"
"""


@pytest.mark.e2e
def test_a_finer_interval_is_closer_to_the_exact_profile(tmp_path):
    (tmp_path / "p.toml").write_text(SPEC)
    out = tmp_path / "p"
    result = CliRunner().invoke(main, ["experiment", "run", str(tmp_path / "p.toml"), "-o", str(out),
                                       "-j", "2"])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO((out / "results.csv").read_text())))
    by = {(r["arch"], r["mode"], r["interval"]): r for r in rows}
    assert len(by) == 8
    for arch in ("i386", "x86_64"):
        for mode in ("pc", "stack"):
            fine, coarse = by[(arch, mode, "10")], by[(arch, mode, "1000")]
            for row in (fine, coarse):
                assert (row["outcome"], row["stdout_as_unprobed"]) == ("ok", "true"), row
                # every instruction is one sample of the exact profile, but the last (exit's)
                assert int(row["exact_samples"]) == int(row["guest_insns"]) - 1, row
                assert int(row["samples"]) == int(row["guest_insns"]) // int(row["interval"]), row
            assert 0 < float(fine["profile_error"]) < float(coarse["profile_error"]) <= 1
            assert int(fine["functions_sampled"]) > int(coarse["functions_sampled"])
        # the leaf frames are the same whether the stack is unwound or not
        for interval in ("10", "1000"):
            assert by[(arch, "pc", interval)]["profile_error"] == \
                by[(arch, "stack", interval)]["profile_error"]
    verified = CliRunner().invoke(main, ["experiment", "verify", str(out), "-j", "2"])
    assert verified.exit_code == 0, verified.output
    assert "host_profile_cpu_s" in verified.output
