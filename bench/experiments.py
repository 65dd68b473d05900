"""The experiment sweep runner (issue 28): points per second of one sweep run in-process (no
executor: the floor the runner's own work adds nothing to), on the local process pool
(`--jobs`, spawn workers) and on a local Dask cluster (`--dask-local`: a scheduler and worker
processes), with 1 and 2 workers each. The same PointTasks go through the one executor path
(trapline/experiments/execute.py) and must give the same rows (checked, host columns aside).

Two sweeps: `short`, hello with a syscall probe (a point is ~20 ms of guest work: the executors'
overhead per point shows), and `loss`, loss_threads 4 x 200 under singlestep-stopall (~0.3 s a
point: the work shows). Each is timed whole, start-up of the pool or cluster included, and the
start-up alone (a sweep of one point) is subtracted for the steady rate. Wall time, best of
`--runs`. `python3 -m bench.experiments [--quick] [--figure PATH.png]`.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from trapline.experiments.execute import Where  # noqa: E402
from trapline.experiments.point import run_point  # noqa: E402
from trapline.experiments.runner import checked_plan, compute, tasks_for  # noqa: E402
from trapline.experiments.spec import load_spec  # noqa: E402

SWEEPS = {
    "short": """
name = "short"
[program]
sample = "hello"
[run]
probes = ["syscall:writev"]
[sweep]
seed = {seeds}
""",
    "loss": """
name = "loss"
[program]
sample = "loss_threads"
argv = ["4", "200"]
[run]
probes = ["uprobe:loss_threads:probed"]
strategy = "singlestep-stopall"
[sweep]
quantum = {seeds}
""",
}
WHERE = [("in-process", None), ("pool 1", Where(jobs=1)), ("pool 2", Where(jobs=2)),
         ("dask 1", Where(dask_local=1)), ("dask 2", Where(dask_local=2))]


def plan_of(kind: str, points: int):
    text = SWEEPS[kind].format(seeds=list(range(1, points + 1)))
    return checked_plan(load_spec(text.encode(), kind, None))


def deterministic(rows: list[dict]) -> list[dict]:
    return [{k: v for k, v in row.items() if not k.startswith("host_")} for row in rows]


def timed(plan, where) -> tuple[float, list[dict]]:
    started = time.perf_counter()
    if where is None:
        rows = [{"point": t.plan.index, **t.plan.params,
                 **run_point(t, plan.trees[t.plan.tree].blobs).row}
                for t in tasks_for(plan, range(len(plan.points)))]
    else:
        rows = compute(plan, range(len(plan.points)), where).ordered_rows()
    return time.perf_counter() - started, rows


def measure(kind: str, points: int, runs: int) -> list[tuple[str, float, float, float]]:
    """(where, whole sweep s, start-up s, steady points/s) per executor."""
    plan, one = plan_of(kind, points), plan_of(kind, 1)
    reference = None
    figures = []
    for name, where in WHERE:
        whole, rows = min((timed(plan, where) for _ in range(runs)), key=lambda r: r[0])
        startup = min(timed(one, where)[0] for _ in range(runs))
        if reference is None:
            reference = deterministic(rows)
        elif deterministic(rows) != reference:
            raise RuntimeError(f"{kind} on {name}: rows differ from the in-process run's")
        # on a busy host a start-up can take longer than a whole sweep did: no figure then
        steady = (points - 1) / (whole - startup) if whole > startup else None
        figures.append((name, whole, startup, steady))
    return figures


def run(quick: bool = False, runs: int = 1, figure: str | None = None) -> list[str]:
    sizes = {"short": 16 if quick else 64, "loss": 8 if quick else 24}
    lines = ["| sweep | points | where | whole sweep (s) | start-up (s) | points/s whole | "
             "points/s steady |", "|---|---|---|---|---|---|---|"]
    results = {}
    for kind, points in sizes.items():
        results[kind] = measure(kind, points, runs)
        for name, whole, startup, steady in results[kind]:
            lines.append(f"| {kind} | {points} | {name} | {whole:.2f} | {startup:.2f} | "
                         f"{points / whole:.1f} | {'n/a' if steady is None else f'{steady:.1f}'} |")
    if figure:
        draw(results, sizes, figure)
        lines.append(f"figure: {figure}")
    return lines


def draw(results: dict, sizes: dict, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    figure, axes = plt.subplots(1, len(results), figsize=(5 * len(results), 3.4))
    for ax, (kind, rows) in zip(axes, results.items()):
        names = [r[0] for r in rows]
        ax.bar([i - 0.2 for i in range(len(rows))], [sizes[kind] / r[1] for r in rows], 0.4,
               label="whole sweep")
        ax.bar([i + 0.2 for i in range(len(rows))], [r[3] or 0 for r in rows], 0.4,
               label="steady (start-up taken out)")
        ax.set_xticks(range(len(rows)), names, fontsize=8)
        ax.set_ylabel("points per second")
        ax.set_title(f"{kind}: {sizes[kind]} points", fontsize=10)
        ax.legend(fontsize=7)
    figure.suptitle("trapline experiment: sweep points per second by executor", fontsize=11)
    figure.tight_layout()
    figure.savefig(path, dpi=100, metadata={"Software": None})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--figure", default=None, metavar="PATH.png")
    args = parser.parse_args()
    for line in run(args.quick, args.runs, args.figure):
        print(line, flush=True)


if __name__ == "__main__":
    main()
