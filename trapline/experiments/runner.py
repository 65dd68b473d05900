"""`trapline experiment run`: a spec's points run on a pool or a cluster (execute.py) into DIR,
with its manifest; Ctrl-C (or --limit) leaves DIR partial, and --resume DIR runs what is left.

DIR holds the spec as given (spec.toml), results.csv and results.jsonl (results.py), the
plots (plots.py, once every point is done) and manifest.toml (manifest.py), written last, with
status "complete" or "partial" and the points done.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UsageError
from . import manifest as manifests
from . import plots
from .execute import Where, executor, run_points
from .inputs import sha256
from .plan import Plan, make_plan
from .point import PointTask
from .results import CSV_NAME, JSONL_NAME, csv_text, jsonl_text, read_jsonl
from .spec import Spec, load_spec


@dataclass
class Progress:
    """What the command shows while points run (a rich bar on a terminal, nothing otherwise)."""
    start: object = None            # callable(total, already_done, where: str)
    advance: object = None          # callable(point index, its parameters)
    stop: object = None             # callable()


@dataclass
class Outcome:
    directory: Path | None
    plan: Plan
    rows: dict = field(default_factory=dict)          # point index -> row
    loaded: set = field(default_factory=set)          # (tree, guest path)
    opened: set = field(default_factory=set)          # (tree, guest path) the guests opened
    records: dict = field(default_factory=dict)       # point index -> its records' JSON Lines
    complete: bool = False
    interrupted: bool = False                         # Ctrl-C stopped it
    why_partial: str = "not run yet"                  # the manifest's word while partial

    def ordered_rows(self) -> list[dict]:
        return [self.rows[i] for i in sorted(self.rows)]


def tasks_for(plan: Plan, indices) -> list[PointTask]:
    tasks = []
    for index in indices:
        point = plan.points[index]
        tree = plan.trees[point.tree]
        handler = plan.trees[point.handler.tree].entries if point.handler else None
        tasks.append(PointTask(point, tree.entries, handler))
    return tasks


def checked_plan(spec: Spec) -> Plan:
    plan = make_plan(spec)
    collected = plan.points[0].collect if plan.points else []
    plots.check(spec, plan.parameters, collected)
    return plan


def compute(plan: Plan, indices, where: Where, progress: Progress | None = None,
            outcome: Outcome | None = None, limit: int | None = None, save=None) -> Outcome:
    """Run the points `indices` of `plan` (at most `limit` of them); rows go into `outcome`,
    and `save()` is called after each (DIR then lists every point done, whatever ends it)."""
    outcome = outcome or Outcome(None, plan)
    todo = [i for i in indices if i not in outcome.rows][:limit]

    def keep(result) -> None:
        outcome.rows[result.index] = {"point": result.index, **plan.points[result.index].params,
                                      **result.row}
        outcome.loaded.update((plan.points[result.index].tree, p) for p in result.loaded)
        outcome.opened.update((plan.points[result.index].tree, p) for p in result.opened or ())
        if plan.points[result.index].records:
            outcome.records[result.index] = result.records
        if save is not None:
            save()
        if progress and progress.advance:
            progress.advance(result.index, plan.points[result.index].params)
    if progress and progress.start:
        progress.start(len(plan.points), len(outcome.rows), where.describe())
    try:
        with executor(where) as pool:
            finished = run_points(pool, tasks_for(plan, todo),
                                  {d: t.blobs for d, t in plan.trees.items()}, keep)
    finally:
        if progress and progress.stop:
            progress.stop()
    outcome.interrupted = not finished
    outcome.complete = finished and len(outcome.rows) == len(plan.points)
    outcome.why_partial = ("" if outcome.complete else "interrupted (Ctrl-C)" if outcome.interrupted
                           else f"--limit {limit}" if limit else "points left")
    return outcome


def _computed(outcome: Outcome, spec: Spec, where: Where, progress, limit) -> None:
    """compute() into DIR: saved after each point, and at the end whatever ended it (an error
    is named in the manifest: the folder says why it is partial)."""
    try:
        compute(outcome.plan, range(len(outcome.plan.points)), where, progress, outcome, limit,
                save=lambda: _write(outcome, spec))
    except BaseException as e:
        outcome.why_partial = f"stopped by an error: {str(e).splitlines()[0] if str(e) else type(e).__name__}"
        raise
    finally:
        _write(outcome, spec)


def run(spec: Spec, directory: Path, where: Where, progress: Progress | None = None,
        limit: int | None = None) -> Outcome:
    plan = checked_plan(spec)              # every mistake of the spec before DIR exists
    if directory.exists() and any(directory.iterdir()):
        raise UsageError(f"-o {directory}: exists and is not empty (--resume {directory} "
                         "finishes a partial run)")
    directory.mkdir(parents=True, exist_ok=True)
    (directory / manifests.SPEC_NAME).write_bytes(spec.text)
    outcome = Outcome(directory, plan)
    _write(outcome, spec)                  # partial, no point done: a DIR that says so
    _computed(outcome, spec, where, progress, limit)
    return outcome


def resume(directory: Path, where: Where, progress: Progress | None = None,
           limit: int | None = None) -> Outcome:
    manifest = manifests.read(directory)
    spec = spec_of(directory, manifest)
    plan = checked_plan(spec)
    changed = changed_input(manifest, plan)
    if changed:
        raise UsageError(f"--resume {directory}: {changed}; start a new run instead")
    outcome = Outcome(directory, plan)
    done = set(manifest.get("points_done", []))
    if done:
        rows = read_jsonl((directory / JSONL_NAME).read_text())
        outcome.rows = {row["point"]: row for row in rows if row["point"] in done}
    outcome.loaded = {(i["tree"], i["guest"]) for i in manifest.get("inputs", []) if i.get("loaded")}
    outcome.opened = {(i["tree"], i["guest"]) for i in manifest.get("inputs", []) if i.get("opened")}
    for index in outcome.rows:
        path = directory / records_name(index)
        if path.is_file():
            outcome.records[index] = path.read_text()
    _computed(outcome, spec, where, progress, limit)
    return outcome


def spec_of(directory: Path, manifest: dict) -> Spec:
    text = (directory / manifests.SPEC_NAME).read_bytes()
    recorded = next((i for i in manifest.get("inputs", []) if i.get("role") == "spec"), {})
    if recorded.get("sha256") != sha256(text):
        raise InputChanged(f"input {manifests.SPEC_NAME} changed: sha256 {recorded.get('sha256')} "
                           f"in the manifest, {sha256(text)} now")
    base = manifest.get("spec_base") or None
    return load_spec(text, str(directory / manifests.SPEC_NAME), Path(base) if base else None)


class InputChanged(UsageError):
    """An input's bytes are not the ones the manifest recorded."""


def changed_input(manifest: dict, plan: Plan) -> str | None:
    """The first recorded input whose bytes differ now (or that is gone), said in one line."""
    now = {e.source: e.sha256 for tree in plan.trees.values() for e in tree.entries if e.kind != "dir"}
    for item in manifest.get("inputs", []):
        if item.get("role") == "spec":
            continue
        current = now.get(item["source"])
        if current != item["sha256"]:
            what = "is gone" if current is None else f"sha256 {item['sha256']} in the manifest, {current} now"
            return f"input {item['source']} (guest {item['guest']}) changed: {what}"
    return None


def records_name(index: int) -> str:
    """A point's probe records (metrics.records = true), named so that they sort in point order."""
    return f"records/{index:06d}.jsonl"


def _write(outcome: Outcome, spec: Spec) -> None:
    directory, plan = outcome.directory, outcome.plan
    rows = outcome.ordered_rows()
    (directory / CSV_NAME).write_text(csv_text(plan.parameters, rows))
    (directory / JSONL_NAME).write_text(jsonl_text(rows))
    outputs = [manifests.output_entry(directory, CSV_NAME, True),
               manifests.output_entry(directory, JSONL_NAME, True)]
    for index in sorted(outcome.records):
        name = records_name(index)
        if not (directory / name).is_file():
            (directory / name).parent.mkdir(exist_ok=True)
            (directory / name).write_text(outcome.records[index])
        outputs.append(manifests.output_entry(directory, name, False))
    if outcome.complete:
        for name in plots.draw(spec, rows, directory):
            plot = next(p for p in spec.data.get("plots", []) if name.rsplit(".", 1)[0] == p["name"])
            outputs.append(manifests.output_entry(directory, name, plots.host_dependent(plot)))
    data = {
        "format": manifests.FORMAT,
        "status": "complete" if outcome.complete else "partial",
        "partial_because": "" if outcome.complete else outcome.why_partial,
        "experiment": spec.name,
        "spec": manifests.SPEC_NAME,
        "spec_source": spec.source,
        "spec_base": str(spec.base) if spec.base else "",
        "points_total": len(plan.points),
        "points_done": sorted(outcome.rows),
        "parameters": plan.parameters,
        "environment": manifests.environment(),
        "inputs": manifests.inputs(spec.text, plan, outcome.loaded, outcome.opened),
        "points": [{"index": p.index, "params": p.params, "tree": p.tree,
                    "done": p.index in outcome.rows} for p in plan.points],
        "outputs": outputs,
    }
    manifests.write(directory, data)
