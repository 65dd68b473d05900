"""The shipped specs' results say what their samples are built to show (samples/README.md):
children x backpatch on the vfork samples, the naive tool's deadlock as a row; a detach at
random points leaves the program's output as unprobed."""
import csv
import io

import pytest
from click.testing import CliRunner

from trapline.cli import main


def _rows(directory) -> list[dict]:
    return list(csv.DictReader(io.StringIO((directory / "results.csv").read_text())))


@pytest.mark.e2e
def test_children_policies_on_the_vfork_samples(tmp_path):
    result = CliRunner().invoke(main, ["experiment", "run", "children", "-o", str(tmp_path / "c"),
                                       "-j", "2"])
    assert result.exit_code == 0, result.output
    rows = _rows(tmp_path / "c")
    assert len(rows) == 36
    by = {(r["arch"], r["sample"], r["children"], r["backpatch"]): r for r in rows}
    for arch in ("i386", "x86_64"):
        for backpatch in ("lazy", "eager"):
            # vfork_probe: the parent's work(3), work(1), work(2); the first vfork child's
            # work(2); the second child's work(4) and, exec'd, its new image's work(5)
            assert by[(arch, "vfork_probe", "follow", backpatch)]["pid_hits"] == "100=3 101=1 102=2"
            assert by[(arch, "vfork_probe", "detach", backpatch)]["pid_hits"] == "100=3"
            for sample in ("vfork_probe", "vfork_nested", "vfork_exec_chain"):
                naive = by[(arch, sample, "naive", backpatch)]
                assert (naive["outcome"], naive["exit_code"]) == ("deadlock", "124"), naive
                assert naive["error"].startswith("deadlock: nothing can run")
                assert by[(arch, sample, "follow", backpatch)]["outcome"] == "ok"


DETACH = """
name = "detach-small"
seed = 3
[program]
sample = "fib"
argv = ["15"]
[run]
probes = ["uprobe:fib:fib", "uretprobe:fib:fib"]
max_insns = 1000000000
[sweep]
strategy = ["trampoline", "emulate"]
native = [""]
detach_after = { random = 2, low = 2000, high = 20000 }
[metrics]
baseline = true
"""


@pytest.mark.e2e
def test_a_detach_at_random_points_leaves_the_output_as_unprobed(tmp_path):
    (tmp_path / "d.toml").write_text(DETACH)
    result = CliRunner().invoke(main, ["experiment", "run", str(tmp_path / "d.toml"), "-o",
                                       str(tmp_path / "d"), "-j", "2"])
    assert result.exit_code == 0, result.output
    rows = _rows(tmp_path / "d")
    assert len(rows) == 4 and len({r["detach_after"] for r in rows}) == 2
    for row in rows:
        assert (row["outcome"], row["stdout_as_unprobed"]) == ("ok", "true"), row
        assert int(row["detached_at"]) >= int(row["detach_after"])
        # fib(15) calls fib 2*F(16)-1 = 1973 times: a detach inside the run sees fewer
        assert 0 < int(row["hits_by_probe"].split()[0].split("=")[1]) < 1973, row


WALKUP = """
name = "walkup-small"
[program]
sample = "callchain"
argv = ["100"]
[walkup]
interval = 2000
period = 100
[sweep]
window = [10, 20]
"""


@pytest.mark.e2e
def test_the_walk_up_executes_a_few_percent_of_full_instrumentation_s_hooks(tmp_path):
    (tmp_path / "w.toml").write_text(WALKUP)
    result = CliRunner().invoke(main, ["experiment", "run", str(tmp_path / "w.toml"), "-o",
                                       str(tmp_path / "w"), "-j", "2"])
    assert result.exit_code == 0, result.output
    rows = _rows(tmp_path / "w")
    assert [r["window"] for r in rows] == ["10", "20"]
    for row in rows:
        assert (row["outcome"], row["stdout_as_unprobed"]) == ("ok", "true"), row
        assert 0 < int(row["walkup_hooks"]) < int(row["full_hooks"]) // 10
        assert float(row["hook_ratio"]) == round(int(row["walkup_hooks"]) / int(row["full_hooks"]), 6)
        assert int(row["samples"]) > 0 and int(row["base_insns"]) > 0


def _with_sweep(name: str, sweep: str) -> str:
    """A shipped spec with its [sweep] table replaced (a few of its points, in the test budget)."""
    from trapline.experiments.shipped import shipped
    text = shipped()[name]
    start = text.index("[sweep]\n")
    end = text.index("\n[", start + 1)
    return text[:start] + "[sweep]\n" + sweep + text[end:]


@pytest.mark.e2e
def test_probe_cost_places_up_to_ten_thousand_probes(tmp_path):
    (tmp_path / "p.toml").write_text(_with_sweep("probe-cost", """
arch = ["i386", "x86_64"]
strategy = ["trampoline", "emulate"]
native = [""]
zip = [{ probe_count = [1, 100], cold_probes = [0, 99] }]
"""))
    result = CliRunner().invoke(main, ["experiment", "run", str(tmp_path / "p.toml"), "-o",
                                       str(tmp_path / "p"), "-j", "2"])
    assert result.exit_code == 0, result.output
    rows = _rows(tmp_path / "p")
    assert len(rows) == 8
    for row in rows:
        assert (row["outcome"], row["stdout_matches"], row["refused"]) == ("ok", "true", "0"), row
        assert row["placed"] == f"{row['strategy']}={row['probe_count']}"
        assert row["hits_by_probe"] == "p0=3193"            # fib(16)'s calls, however many probes
        assert int(row["cold_hits"]) <= int(row["cold_probes"])
        if row["strategy"] == "emulate":                    # an int3 a hit, nothing run in the guest
            assert (row["traps_by_kind"], row["added_insns"]) == (f"int3={row['hits']}", "0"), row
        else:                                               # the trampoline's code runs in the guest
            assert int(row["added_insns"]) > 0 and row["traps_by_kind"] == f"int3_fast={row['hits']}"
    # the sweep's far end, one point of it
    (tmp_path / "far.toml").write_text(_with_sweep("probe-cost", """
arch = ["x86_64"]
strategy = ["emulate"]
native = [""]
zip = [{ probe_count = [10000], cold_probes = [9999] }]
"""))
    result = CliRunner().invoke(main, ["experiment", "run", str(tmp_path / "far.toml"), "-o",
                                       str(tmp_path / "far"), "-j", "1"])
    assert result.exit_code == 0, result.output
    (far,) = _rows(tmp_path / "far")
    assert (far["outcome"], far["stdout_matches"], far["placed"]) == ("ok", "true", "emulate=10000"), far
    assert far["hits_by_probe"] == "p0=3193"
