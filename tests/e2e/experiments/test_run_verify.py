"""`trapline experiment run` and `verify` (issue 28): a run's folder verifies bit for bit; a
tampered results file and a changed input are caught with the row, column and both values, or
the input and both hashes; --limit leaves a partial folder that --resume finishes into the same
results as one run; and a real localhost Dask cluster gives the local pool's results."""
import shutil
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from trapline.cli import main
from trapline.experiments.metrics import is_host
from trapline.experiments.results import read_csv

from ..samples.test_samples_run import SAMPLES

SPEC = """
name = "small-loss"
description = "singlestep loses hits, emulate does not"
[program]
path = "{program}"
argv = ["{workers}", "100"]
expect_stdout = "threads={workers} calls={expected_hits}\\n"
[run]
probes = ["uprobe:loss_threads:probed"]
quantum = 7
exact_quantum = true
[params]
program = "loss_threads"
[sweep]
strategy = ["singlestep", "emulate"]
workers = [2, 4]
[metrics]
expected_hits = "workers * 100"
baseline = true
[[plots]]
name = "lost"
x = "workers"
y = "lost_hits"
series = "strategy"
[[plots]]
name = "time"
x = "workers"
y = "host_cpu_s"
"""


def _invoke(*args: str):
    return CliRunner().invoke(main, ["experiment", *args])


@pytest.fixture
def spec_dir(tmp_path) -> Path:
    """The spec beside a copy of the x86-64 loss_threads it names by a relative path."""
    folder = tmp_path / "spec"
    folder.mkdir()
    shutil.copy(SAMPLES / "x86_64" / "loss_threads", folder / "loss_threads")
    (folder / "small.toml").write_text(SPEC)
    return folder


@pytest.fixture
def done(spec_dir, tmp_path) -> Path:
    out = tmp_path / "out"
    result = _invoke("run", str(spec_dir / "small.toml"), "-o", str(out), "--jobs", "2")
    assert result.exit_code == 0, result.output
    return out


def _deterministic(csv_text: str) -> list[list[str]]:
    table = read_csv(csv_text)
    keep = [i for i, name in enumerate(table[0]) if not is_host(name)]
    return [[row[i] for i in keep] for row in table]


@pytest.mark.e2e
def test_a_run_writes_its_folder_and_verifies_bit_for_bit(done, spec_dir):
    assert sorted(p.name for p in done.iterdir()) == [
        "lost.png", "lost.svg", "manifest.toml", "results.csv", "results.jsonl", "spec.toml",
        "time.png", "time.svg"]
    assert (done / "spec.toml").read_bytes() == (spec_dir / "small.toml").read_bytes()
    manifest = tomllib.loads((done / "manifest.toml").read_text())
    assert (manifest["status"], manifest["points_done"]) == ("complete", [0, 1, 2, 3])
    program = [i for i in manifest["inputs"] if i["role"] == "file"]
    assert [(i["guest"], i["loaded"], i["size"]) for i in program] == [
        ("/bin/loss_threads", True, (spec_dir / "loss_threads").stat().st_size)]
    assert {o["path"]: o["host_data"] for o in manifest["outputs"]} == {
        "results.csv": True, "results.jsonl": True, "lost.png": False, "lost.svg": False,
        "time.png": True, "time.svg": True}
    header, *table = read_csv((done / "results.csv").read_text())
    assert header[:4] == ["point", "program", "strategy", "workers"]
    rows = {(r[2], r[3]): r for r in table}
    lost = header.index("lost_hits")
    assert rows[("emulate", "2")][lost] == "0" and rows[("emulate", "4")][lost] == "0"
    assert rows[("singlestep", "4")][lost] == "35"           # docs/guide/emulate.md's figure
    result = _invoke("verify", str(done), "--jobs", "2")
    assert result.exit_code == 0, result.output
    assert "skipping the host columns host_cpu_s, host_hits_per_cpu_s, host_wall_s" in result.output
    assert "plots drawn again, byte-identical: lost.png, lost.svg" in result.output
    assert "plots of host columns skipped: time.png, time.svg" in result.output
    assert result.output.rstrip().endswith("verified")


@pytest.mark.e2e
def test_verify_names_the_first_tampered_cell(done):
    text = (done / "results.csv").read_text().splitlines(keepends=True)
    header = text[0].rstrip("\n").split(",")
    cells = text[2].split(",")
    column = header.index("guest_insns")
    before = cells[column]
    cells[column] = str(int(before) + 1)
    text[2] = ",".join(cells)
    (done / "results.csv").write_text("".join(text))
    result = _invoke("verify", str(done), "--jobs", "2")
    assert result.exit_code == 1, result.output
    assert (f"differs: results.csv: row 2 (point 1), column guest_insns: recorded "
            f"'{int(before) + 1}', now '{before}'") in result.output


@pytest.mark.e2e
def test_verify_catches_a_changed_host_column_by_its_hash(done):
    text = (done / "results.csv").read_text().splitlines(keepends=True)
    cells = text[1].rstrip("\n").split(",")
    cells[-1] = "12345.000000"                                 # host_cpu_s: not compared
    text[1] = ",".join(cells) + "\n"
    (done / "results.csv").write_text("".join(text))
    result = _invoke("verify", str(done), "--jobs", "2")
    assert result.exit_code == 1, result.output
    assert "results.csv: sha256 differs from the manifest's" in result.output


@pytest.mark.e2e
def test_verify_names_a_changed_input(done, spec_dir):
    program = spec_dir / "loss_threads"
    before = __import__("hashlib").sha256(program.read_bytes()).hexdigest()
    program.write_bytes(program.read_bytes() + b"\0")
    result = _invoke("verify", str(done), "--jobs", "1")
    assert result.exit_code == 1, result.output
    assert result.output.startswith(f"differs: input {program} (guest /bin/loss_threads) changed: "
                                    f"sha256 {before} in the manifest, ")


@pytest.mark.e2e
def test_verify_names_a_changed_spec(done):
    (done / "spec.toml").write_text((done / "spec.toml").read_text().replace("100", "101"))
    result = _invoke("verify", str(done), "--jobs", "1")
    assert result.exit_code == 1 and "differs: input spec.toml changed: sha256" in result.output


@pytest.mark.e2e
def test_limit_leaves_a_partial_folder_that_resume_finishes(done, spec_dir, tmp_path):
    out = tmp_path / "again"
    first = _invoke("run", str(spec_dir / "small.toml"), "-o", str(out), "--limit", "3", "-j", "2")
    assert first.exit_code == 0, first.output
    assert "partial, 3 of 4 points done; trapline experiment run --resume" in first.output
    manifest = tomllib.loads((out / "manifest.toml").read_text())
    assert (manifest["status"], manifest["points_done"]) == ("partial", [0, 1, 2])
    assert manifest["partial_because"] == "--limit 3"
    assert not (out / "lost.png").exists()                    # plots wait for every point
    second = _invoke("run", "--resume", str(out), "-j", "2")
    assert second.exit_code == 0, second.output
    manifest = tomllib.loads((out / "manifest.toml").read_text())
    assert (manifest["status"], manifest["points_done"]) == ("complete", [0, 1, 2, 3])
    assert _deterministic((out / "results.csv").read_text()) == \
        _deterministic((done / "results.csv").read_text())
    assert (out / "lost.svg").read_bytes() == (done / "lost.svg").read_bytes()
    assert (out / "lost.png").read_bytes() == (done / "lost.png").read_bytes()


@pytest.mark.e2e
def test_a_folder_in_use_is_not_overwritten(done, spec_dir):
    result = _invoke("run", str(spec_dir / "small.toml"), "-o", str(done))
    assert result.exit_code == 2
    assert "exists and is not empty (--resume" in result.output


@pytest.mark.e2e
def test_a_real_localhost_dask_cluster_gives_the_local_results(done, spec_dir, tmp_path):
    """A scheduler and two worker processes (LocalCluster(processes=True)), reached through
    --scheduler as a remote one would be: the same cells as the local pool's run."""
    import distributed                 # a dependency of trapline (setup.cfg)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        out = tmp_path / "dask"
        result = _invoke("run", str(spec_dir / "small.toml"), "-o", str(out),
                         "--scheduler", cluster.scheduler_address)
        assert result.exit_code == 0, result.output
        verified = _invoke("verify", str(done), "--scheduler", cluster.scheduler_address)
        assert verified.exit_code == 0, verified.output
    assert _deterministic((out / "results.csv").read_text()) == \
        _deterministic((done / "results.csv").read_text())
    assert (out / "lost.svg").read_bytes() == (done / "lost.svg").read_bytes()


@pytest.mark.e2e
def test_records_are_kept_per_point_and_verified_line_by_line(spec_dir, tmp_path):
    spec = spec_dir / "records.toml"
    spec.write_text(SPEC.replace('workers = [2, 4]', 'workers = [2]').replace(
        "baseline = true", "records = true").replace('"100"', '"5"').replace("* 100", "* 5"))
    out = tmp_path / "records"
    result = _invoke("run", str(spec), "-o", str(out), "-j", "2")
    assert result.exit_code == 0, result.output
    files = sorted(p.name for p in (out / "records").iterdir())
    assert files == ["000000.jsonl", "000001.jsonl"]
    header, *rows = read_csv((out / "results.csv").read_text())
    for name, row in zip(files, rows):
        lines = (out / "records" / name).read_text().splitlines()
        assert len(lines) == int(row[header.index("hits")]) > 0
        assert all('"probe":"uprobe:loss_threads:probed"' in line for line in lines)
    verified = _invoke("verify", str(out), "-j", "2")
    assert verified.exit_code == 0 and "probe records of 2 points identical" in verified.output
    first = (out / "records" / "000001.jsonl").read_text().splitlines(keepends=True)
    tampered = first[0].replace('"tid":', '"tid":9')
    (out / "records" / "000001.jsonl").write_text("".join([tampered] + first[1:]))
    verified = _invoke("verify", str(out), "-j", "2")
    assert verified.exit_code == 1, verified.output
    assert f"differs: records/000001.jsonl: line 1: recorded {tampered.rstrip()}, now " in verified.output
