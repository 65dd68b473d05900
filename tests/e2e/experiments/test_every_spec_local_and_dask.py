"""Every shipped spec runs locally and on a real localhost Dask cluster with identical results,
and verifies bit for bit (issue 28, "Done when").

The specs are enumerated from the package (trapline.experiments.shipped), so a spec added there
is covered without touching this file. Each runs on a few of its points (few_points: the first
value of every swept list, both arches) twice: on the local process pool (-j 2) and through
--scheduler on a LocalCluster of two worker processes, as a remote cluster is reached. Both
folders must hold the same results.csv and results.jsonl once the host_* figures (the only ones
allowed to differ) are taken out, byte for byte, the same manifest (inputs, points,
environment) and the same sha256 for every output that holds no host data (the plots); and each
folder verifies on the other executor (the local run's on the cluster, the cluster's on the
local pool).

Nothing here waits on a clock: the cluster is started once for the module with Dask's own
start-up timeouts raised (a loaded host is slow to start worker processes, never wrong), and
the commands wait for every point whatever it takes.
"""
import csv
import io
import re
import tomllib

import dask
import distributed
import pytest
from click.testing import CliRunner

from trapline.cli import main
from trapline.experiments.metrics import is_host
from trapline.experiments.shipped import shipped
from trapline.experiments.toml_writer import Inline, dumps

SPECS = sorted(shipped())
ARCHES = ["i386", "x86_64"]
HOST_FIELD = re.compile(r',"host_[a-z_]+":[-+0-9.eE]+|"host_[a-z_]+":[-+0-9.eE]+,?')


def few_points(text: str) -> str:
    """The shipped spec with its sweep cut to a few points: the first value of each list (of
    each zip group's lists, together), one of a random draw, and both arches."""
    data = tomllib.loads(text)
    sweep = {}
    for key, value in data.get("sweep", {}).items():
        if key == "zip":
            sweep[key] = Inline([{name: values[:1] for name, values in group.items()}
                                 for group in value])
        elif isinstance(value, dict):
            sweep[key] = {**value, "random": 1}
        else:
            sweep[key] = ARCHES if key == "arch" else value[:1]
    sweep.setdefault("arch", ARCHES)
    data["sweep"] = sweep
    return dumps(data)


@pytest.fixture(scope="module")
def scheduler():
    """A scheduler and two worker processes on localhost, reached by its tcp:// address."""
    with dask.config.set({"distributed.comm.timeouts.connect": "300s",
                                 "distributed.deploy.lost-worker-timeout": "300s"}), \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                     dashboard_address=None, timeout="300s") as cluster:
        yield cluster.scheduler_address


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(main, ["experiment", *args])
    assert result.exit_code == 0, (args, result.output)
    return result.output


def _deterministic_csv(path) -> list[list[str]]:
    header, *rows = list(csv.reader(io.StringIO(path.read_text())))
    keep = [i for i, name in enumerate(header) if not is_host(name)]
    return [[row[i] for i in keep] for row in [header, *rows]]


def _deterministic_jsonl(path) -> list[str]:
    return [HOST_FIELD.sub("", line) for line in path.read_text().splitlines()]


def _manifest(folder) -> dict:
    return tomllib.loads((folder / "manifest.toml").read_text())


def test_few_points_keeps_every_swept_name_and_both_arches():
    for name in SPECS:
        full = tomllib.loads(shipped()[name])["sweep"]
        cut = tomllib.loads(few_points(shipped()[name]))["sweep"]
        assert list(cut) == list(full) + ([] if "arch" in full else ["arch"]), name
        assert cut["arch"] == ARCHES


@pytest.mark.e2e
@pytest.mark.parametrize("name", SPECS)
def test_the_spec_gives_the_same_results_on_the_local_pool_and_on_dask(name, scheduler, tmp_path):
    spec = tmp_path / f"{name}.toml"
    spec.write_text(few_points(shipped()[name]))
    local, dask = tmp_path / "local", tmp_path / "dask"
    _invoke("run", str(spec), "-o", str(local), "-j", "2")
    _invoke("run", str(spec), "-o", str(dask), "--scheduler", scheduler)

    rows = _deterministic_csv(local / "results.csv")
    assert len(rows) - 1 == len(_manifest(local)["points"]) >= 2
    assert sorted({row[rows[0].index("arch")] for row in rows[1:]}) == ARCHES
    assert rows == _deterministic_csv(dask / "results.csv")
    assert _deterministic_jsonl(local / "results.jsonl") == _deterministic_jsonl(dask / "results.jsonl")

    manifests = _manifest(local), _manifest(dask)
    for key in ("status", "points_done", "points", "inputs", "environment"):
        assert manifests[0][key] == manifests[1][key], key
    assert manifests[0]["status"] == "complete"
    kept = [{o["path"]: o["sha256"] for o in m["outputs"] if not o["host_data"]} for m in manifests]
    assert kept[0] == kept[1]
    plots = [p["name"] for p in tomllib.loads(shipped()[name]).get("plots", [])
             if not is_host(p["y"])]
    assert {f"{p}.{fmt}" for p in plots for fmt in ("png", "svg")} <= set(kept[0])

    assert _invoke("verify", str(local), "--scheduler", scheduler).rstrip().endswith("verified")
    assert _invoke("verify", str(dask), "-j", "1").rstrip().endswith("verified")
