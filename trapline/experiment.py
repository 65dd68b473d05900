"""`trapline experiment ...`: reproducible instrumentation experiments.

`loss` runs samples/loss_threads (threads) and samples/loss_procs (processes sharing the code)
under each probe strategy, worker count and scheduler quantum and prints how many of the
expected hits each strategy recorded (trapline/experiment_loss.py). Everything but the
wall-time column is deterministic for a given seed.
"""
import sys
from pathlib import Path

import click

from .host_signals import guest_command

from .experiment_loss import (GUESTS, STRATEGY_ORDER, available_strategies,
                                          format_table, run_experiment)

SAMPLE_BIN = Path(__file__).resolve().parents[1] / "samples" / "bin"


def _ints(text: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise click.BadParameter(f"{text!r}: expected comma-separated numbers") from None
    if not values or min(values) < 1:
        raise click.BadParameter(f"{text!r}: expected positive numbers")
    return values


@click.group()
def experiment():
    """Reproducible instrumentation experiments."""


@experiment.command()
@click.option("--arch", "arches", multiple=True, type=click.Choice(["i386", "x86_64"]),
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
@click.option("--binary-dir", type=click.Path(file_okay=False, exists=True), default=str(SAMPLE_BIN),
              show_default=True, help="Folder with ARCH/loss_threads and ARCH/loss_procs.")
@guest_command
def loss(arches, guests, strategies, workers, quanta, calls, seed, binary_dir):
    """Hits lost per strategy with several workers in the probed function (US 7,350,196)."""
    try:
        rows = run_experiment(binary_dir, arches or ("i386", "x86_64"), guests or tuple(GUESTS),
                              available_strategies(list(strategies) or None), _ints(workers),
                              _ints(quanta), calls, seed=seed,
                              progress=_progress if sys.stderr.isatty() else None)
    except Exception as e:              # noqa: BLE001 -- every failure gets its status (exit_status.py)
        from .exit_status import exit_for
        exit_for(e, lambda text: click.echo(text, err=True))
    click.echo(format_table(rows))


def _progress(done: int, total: int, row) -> None:
    """One overwritten status line on a terminal (the table needs every row before it prints)."""
    line = f"run {done}/{total}: {row.arch} {row.guest} {row.strategy} x{row.workers} q{row.quantum}"
    click.echo(f"\r{line:<70}" + ("\r" + " " * 70 + "\r" if done == total else ""), err=True,
               nl=False)
