"""The README's experiment figures come from the shipped specs (issue 28: "the plots are in the
README"). bench/experiment_figures.py runs each shipped spec whole and keeps, in docs/figures,
its figure (NAME.svg: the first plot of a deterministic metric), the rows it was drawn from
(NAME.jsonl, results.jsonl without host_* figures) and, in experiments.toml, which plot of
which spec text with which matplotlib. Here, for every shipped spec (enumerated from the
package: a new spec without its figure fails): the spec is the one the figure was made from,
the figure is what its rows draw, byte for byte, the rows are the spec's points, and the
cheapest of them runs again into the same row."""
import json
import tomllib
from pathlib import Path

import matplotlib
import pytest

from bench.experiment_figures import deterministic_rows, figure_plot
from trapline.experiments import plots
from trapline.experiments.cli import load
from trapline.experiments.inputs import sha256
from trapline.experiments.point import run_point
from trapline.experiments.results import read_jsonl
from trapline.experiments.runner import checked_plan, tasks_for
from trapline.experiments.shipped import shipped

FIGURES = Path(__file__).resolve().parents[3] / "docs" / "figures"
INDEX = tomllib.loads((FIGURES / "experiments.toml").read_text())
SPECS = sorted(shipped())
REGENERATE = "python3 -m bench.experiment_figures --only {name}"


def _rows(name: str) -> list[dict]:
    return read_jsonl((FIGURES / INDEX[name]["rows"]).read_text())


@pytest.mark.parametrize("name", SPECS)
def test_the_figure_was_made_from_the_shipped_spec_as_it_is(name):
    assert name in INDEX, f"no figure of {name}: {REGENERATE.format(name=name)}"
    entry = INDEX[name]
    assert entry["spec_sha256"] == sha256(shipped()[name].encode()), \
        f"{name} changed since its figure was drawn: {REGENERATE.format(name=name)}"
    assert entry["plot"] == figure_plot(load(name))
    assert (entry["figure"], entry["rows"]) == (f"{name}.svg", f"{name}.jsonl")


@pytest.mark.parametrize("name", SPECS)
def test_the_figure_is_what_its_rows_draw(name, tmp_path):
    # the SVG's bytes are matplotlib's: the index names the version that drew them
    assert matplotlib.__version__ == INDEX["matplotlib"], \
        f"the figures were drawn with matplotlib {INDEX['matplotlib']}: install it, or regenerate"
    spec = load(name)
    plots.draw(spec, _rows(name), tmp_path)
    drawn = (tmp_path / f"{INDEX[name]['plot']}.svg").read_bytes()
    assert drawn == (FIGURES / f"{name}.svg").read_bytes()


@pytest.mark.e2e
@pytest.mark.parametrize("name", SPECS)
def test_the_rows_are_the_spec_s_points_and_the_cheapest_runs_again_the_same(name):
    text = (FIGURES / INDEX[name]["rows"]).read_text()
    assert deterministic_rows(text) == text                 # canonical, no host_* figure
    rows = read_jsonl(text)
    plan = checked_plan(load(name))
    assert [r["point"] for r in rows] == [p.index for p in plan.points]
    for row, point in zip(rows, plan.points):
        assert {k: row[k] for k in point.params} == point.params, row
    cheapest = min(rows, key=lambda r: (r["guest_insns"], r["point"]))
    (task,) = tasks_for(plan, [cheapest["point"]])
    handler = plan.trees[task.plan.handler.tree].blobs if task.plan.handler else None
    result = run_point(task, plan.trees[task.plan.tree].blobs, handler)
    again = json.loads(json.dumps({"point": task.plan.index, **task.plan.params, **result.row}))
    assert {k: v for k, v in again.items() if not k.startswith("host_")} == cheapest
