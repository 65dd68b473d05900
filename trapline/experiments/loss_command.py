"""`trapline experiment loss`: the shipped loss spec (specs/loss.toml) with the sweep given as
options, run on the same pool as `experiment run`, printed as the table it always printed
(loss.py's format_table). No folder is written: `trapline experiment run loss` keeps one."""
from __future__ import annotations

import sys

import click

from .loss import GUESTS, STRATEGY_ORDER, LossRow, available_strategies, format_table

ARCHES = ("i386", "x86_64")


def _ints(text: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise click.BadParameter(f"{text!r}: expected comma-separated numbers") from None
    if not values or min(values) < 1:
        raise click.BadParameter(f"{text!r}: expected positive numbers")
    return values


def loss_spec(arches, guests, strategies, workers, quanta, calls, seed, binary_dir=None):
    """The shipped loss spec, its sweep replaced by these lists."""
    import tomllib

    from . import toml_writer
    from .shipped import shipped
    from .spec import load_spec
    data = tomllib.loads(shipped()["loss"])
    data["seed"] = seed
    data["params"] = {"calls": calls}
    data["sweep"] = {"arch": list(arches),
                     "zip": toml_writer.Inline([{"guest": list(guests), "sample": [GUESTS[g][0] for g in guests]}]),
                     "strategy": list(strategies), "workers": list(workers), "quantum": list(quanta)}
    if binary_dir is not None:              # the samples of a build of one's own
        del data["program"]["sample"]
        data["params"]["binary_dir"] = str(binary_dir)
        data["program"]["path"] = "{binary_dir}/{arch}/{sample}"
    text = toml_writer.dumps(data).encode()
    return load_spec(text, "experiment loss", None)


def to_row(row: dict) -> LossRow:
    return LossRow(row["arch"], row["guest"], row["strategy"], row["workers"], row["quantum"],
                   row["expected_hits"], row["hits"], row["guest_insns"], row["exit_code"],
                   row["host_wall_s"], row["held_thread_insns"])


@click.command()
@click.option("--arch", "arches", multiple=True, type=click.Choice(list(ARCHES)),
              help="Architectures (default: both).")
@click.option("--guest", "guests", multiple=True, type=click.Choice(list(GUESTS)),
              help="Workers as threads (loss_threads) or as processes sharing the code "
                   "(loss_procs, clone with CLONE_VM); default: both.")
@click.option("--strategy", "strategies", multiple=True, type=click.Choice(STRATEGY_ORDER),
              help="Strategies (default: every registered one).")
@click.option("--workers", "--threads", "workers", default="2,4", show_default=True,
              help="Worker counts (threads or processes), comma-separated.")
@click.option("--quanta", default="1,3,7,50", show_default=True,
              help="Scheduler quanta (instructions), comma-separated.")
@click.option("--calls", type=click.IntRange(min=1), default=200, show_default=True,
              help="Calls of probed() per worker.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--binary-dir", type=click.Path(file_okay=False, exists=True), default=None,
              help="Folder with ARCH/loss_threads and ARCH/loss_procs (default: the samples "
                   "shipped with trapline).")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
              help="Local worker processes (default: the number of cores).")
def loss(arches, guests, strategies, workers, quanta, calls, seed, binary_dir, jobs):
    """Hits lost per strategy with several workers in the probed function (US 7,350,196)."""
    from .execute import Where
    from .progress import bar
    from .runner import checked_plan, compute
    try:
        spec = loss_spec(arches or ARCHES, guests or tuple(GUESTS),
                         available_strategies(list(strategies) or None), _ints(workers),
                         _ints(quanta), calls, seed, binary_dir)
        plan = checked_plan(spec)
        outcome = compute(plan, range(len(plan.points)), Where(jobs=jobs), bar())
    except click.BadParameter:
        raise
    except Exception as e:              # noqa: BLE001 -- every failure gets its status (exit_status.py)
        from ..exit_status import exit_for
        exit_for(e, lambda text: click.echo(text, err=True))
    rows = outcome.ordered_rows()
    broken = [r for r in rows if not r.get("stdout_matches")]
    if broken:
        click.echo(f"trapline: {broken[0]['strategy']}: the guest's output changed under the "
                   f"probe (point {broken[0]['point']}: {broken[0]['outcome']} {broken[0].get('error', '')})",
                   err=True)
        sys.exit(2)
    click.echo(format_table([to_row(r) for r in rows]))
    if outcome.interrupted:
        sys.exit(130)
