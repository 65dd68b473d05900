"""The README's experiment figures (docs/figures/NAME.svg), from real runs of the shipped specs.

Each shipped spec (trapline.experiments.shipped) runs whole, as `trapline experiment run NAME`
would, into a results folder; its figure is its first plot of a deterministic metric (the SVG
plots.py drew in the run), copied to docs/figures/NAME.svg beside the rows it was drawn from,
docs/figures/NAME.jsonl (results.jsonl without its host_* figures, which no figure here plots).
docs/figures/experiments.toml says which plot, from which spec text (sha256) and with which
matplotlib each figure was drawn: tests/e2e/experiments/test_figures.py checks that every
shipped spec has its figure, that the spec has not changed since, that the figure is the one
its rows draw, byte for byte, and that a cheap point of the rows is what trapline gives now.

`python3 -m bench.experiment_figures [--only NAME ...] [-j N] [--keep DIR]` (a full run of all:
some minutes on two cores; the figures do not depend on -j or the host, only the host_* columns
of the results, which are not kept).
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FIGURES = ROOT / "docs" / "figures"
INDEX = FIGURES / "experiments.toml"
HOST_FIELD = re.compile(r'"host_[a-z_]+":')


def figure_plot(spec) -> str:
    """The plot a spec's figure shows: its first one of a deterministic metric."""
    from trapline.experiments.metrics import is_host
    return next(p["name"] for p in spec.data.get("plots", []) if not is_host(p["y"]))


def deterministic_rows(jsonl: str) -> str:
    """results.jsonl without the host_* figures (same canonical form: keys sorted, compact)."""
    rows = [json.loads(line) for line in jsonl.splitlines() if line.strip()]
    return "".join(json.dumps({k: v for k, v in row.items() if not k.startswith("host_")},
                              sort_keys=True, separators=(",", ":")) + "\n" for row in rows)


def index_entry(name: str, text: str, plot: str) -> dict:
    from trapline.experiments.inputs import sha256
    return {"plot": plot, "spec_sha256": sha256(text.encode()), "rows": f"{name}.jsonl",
            "figure": f"{name}.svg"}


def read_index() -> dict:
    import tomllib
    return tomllib.loads(INDEX.read_text()) if INDEX.is_file() else {}


def write_index(index: dict) -> None:
    from trapline.experiments import toml_writer
    header = ("# The README's experiment figures: which plot of which shipped spec (its text's sha256),\n"
              "# drawn from the rows beside it with this matplotlib. Written by\n"
              "# `python3 -m bench.experiment_figures`; checked by tests/e2e/experiments/test_figures.py.\n")
    INDEX.write_text(header + toml_writer.dumps(index))


def regenerate(name: str, jobs: int | None, work: Path) -> dict:
    """Run the shipped spec `name` whole into work/NAME; its figure and rows into docs/figures."""
    from trapline.experiments.cli import load
    from trapline.experiments.execute import Where
    from trapline.experiments.runner import run
    from trapline.experiments.shipped import shipped
    spec = load(name)
    plot = figure_plot(spec)
    folder = work / name
    outcome = run(spec, folder, Where(jobs=jobs))
    if not outcome.complete:
        raise SystemExit(f"{name}: the run did not complete ({outcome.why_partial})")
    shutil.copyfile(folder / f"{plot}.svg", FIGURES / f"{name}.svg")
    (FIGURES / f"{name}.jsonl").write_text(deterministic_rows((folder / "results.jsonl").read_text()))
    return index_entry(name, shipped()[name], plot)


def main() -> None:
    from trapline.experiments.shipped import shipped
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", metavar="NAME", default=None)
    parser.add_argument("-j", "--jobs", type=int, default=None)
    parser.add_argument("--keep", type=Path, default=None, metavar="DIR",
                        help="keep the results folders in DIR (default: a temporary folder)")
    args = parser.parse_args()
    names = args.only or list(shipped())
    unknown = [n for n in names if n not in shipped()]
    if unknown:
        parser.error(f"no shipped spec {', '.join(unknown)} (have: {', '.join(shipped())})")
    import matplotlib
    index = {k: v for k, v in read_index().items() if k in shipped()}
    with tempfile.TemporaryDirectory(prefix="trapline-figures-") as scratch:
        work = args.keep or Path(scratch)
        for name in names:
            print(f"{name}: running the whole sweep", flush=True)
            index[name] = regenerate(name, args.jobs, work)
            # after each figure: an interrupted regeneration keeps what it finished
            write_index({"matplotlib": matplotlib.__version__,
                         **{n: index[n] for n in sorted(index) if isinstance(index[n], dict)}})
            print(f"{name}: docs/figures/{name}.svg ({index[name]['plot']})", flush=True)


if __name__ == "__main__":
    main()
