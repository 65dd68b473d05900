"""`trapline experiment ...`: reproducible instrumentation experiments.

  run SPEC.toml|NAME [-o DIR] [--jobs N | --scheduler tcp://HOST:PORT | --dask-local N]
      [--resume DIR] [--limit N]   a spec's sweep into DIR (runner.py)
  verify DIR                      run it again and compare bit for bit (verify.py)
  list / show NAME                the specs shipped in the package (specs/*.toml)
  schema                          the spec's JSON Schema (schema.py)
  loss [...]                      the loss spec with its options on the command line, printed
                                  as a table (loss.py)

Everything but the host_* columns (and the loss table's wall-time column) is deterministic.
"""
from __future__ import annotations

import sys
from pathlib import Path

import click

from ..errors import UsageError
from .shipped import shipped


def load(argument: str):
    from .spec import load_spec
    path = Path(argument)
    if path.is_file():
        return load_spec(path.read_bytes(), str(path), path.resolve().parent)
    specs = shipped()
    if argument in specs:
        return load_spec(specs[argument].encode(), f"{argument} (shipped)", None)
    raise UsageError(f"{argument}: no such file, and no shipped spec of that name "
                     f"(have: {', '.join(specs)})")


def _fail(error: BaseException) -> None:
    from ..exit_status import exit_for
    exit_for(error, lambda text: click.echo(text, err=True))


@click.group()
def experiment():
    """Reproducible instrumentation experiments."""


def where_options(f):
    f = click.option("--dask-local", type=click.IntRange(min=1), default=None, metavar="N",
                     help="Run the points on a local Dask cluster of N worker processes.")(f)
    f = click.option("--scheduler", default=None, metavar="tcp://HOST:PORT",
                     help="Run the points on this Dask scheduler's workers.")(f)
    f = click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
                     help="Local worker processes (default: the number of cores).")(f)
    return f


def _where(jobs, scheduler, dask_local):
    from .execute import Where
    return Where(jobs=jobs, scheduler=scheduler, dask_local=dask_local)


@experiment.command("run")
@click.argument("spec", required=False)
@click.option("-o", "--output", "output", type=click.Path(file_okay=False), default=None,
              help="The results folder (default: results/NAME).")
@click.option("--resume", type=click.Path(file_okay=False, exists=True), default=None,
              metavar="DIR", help="Finish the partial run in DIR.")
@click.option("--limit", type=click.IntRange(min=1), default=None,
              help="Run at most this many points now; DIR stays partial for --resume.")
@where_options
def run_command(spec, output, resume, limit, jobs, scheduler, dask_local):
    """Run an experiment spec (a TOML file, or a shipped spec's NAME) into a results folder."""
    from . import runner
    from .progress import bar
    where = _where(jobs, scheduler, dask_local)
    try:
        if resume:
            if spec or output:
                raise UsageError("--resume DIR takes no SPEC and no -o: the folder has both")
            directory = Path(resume)
            outcome = runner.resume(directory, where, bar(), limit)
        else:
            if not spec:
                raise UsageError("give a SPEC (a .toml file or a shipped spec's name) or --resume DIR")
            loaded = load(spec)
            directory = Path(output) if output else Path("results") / loaded.name
            outcome = runner.run(loaded, directory, where, bar(), limit)
    except Exception as e:                 # noqa: BLE001 -- every failure gets its status
        _fail(e)
    done, total = len(outcome.rows), len(outcome.plan.points)
    if outcome.complete:
        click.echo(f"{directory}: {total} points, complete (results.csv, results.jsonl, "
                   f"manifest.toml{', plots' if outcome.plan.spec.data.get('plots') else ''})")
        return
    click.echo(f"{directory}: partial, {done} of {total} points done; "
               f"trapline experiment run --resume {directory} finishes it")
    if outcome.interrupted:
        sys.exit(130)                      # stopped by Ctrl-C, as a shell reports SIGINT


@experiment.command("verify")
@click.argument("directory", type=click.Path(file_okay=False, exists=True))
@where_options
def verify_command(directory, jobs, scheduler, dask_local):
    """Run DIR's experiment again from its manifest and compare bit for bit (exit 1 if not)."""
    from .progress import bar
    from .verify import verify
    try:
        verdict = verify(Path(directory), _where(jobs, scheduler, dask_local), bar())
    except Exception as e:                 # noqa: BLE001
        _fail(e)
    for line in verdict.lines:
        click.echo(line if verdict.ok or line is not verdict.lines[-1] else f"differs: {line}")
    sys.exit(0 if verdict.ok else 1)


@experiment.command("list")
def list_command():
    """The experiment specs shipped with trapline."""
    import tomllib
    specs = shipped()
    width = max(map(len, specs))
    for name, text in specs.items():
        click.echo(f"{name:<{width}}  {tomllib.loads(text).get('description', '')}")


@experiment.command("schema")
def schema_command():
    """Print the spec's JSON Schema (for editors that check TOML against one)."""
    import json

    from .schema import schema
    click.echo(json.dumps(schema(), indent=2))


@experiment.command("show")
@click.argument("name")
def show_command(name):
    """Print a shipped spec (to copy and change)."""
    specs = shipped()
    if name not in specs:
        _fail(UsageError(f"{name}: no shipped spec of that name (have: {', '.join(specs)})"))
    click.echo(specs[name], nl=False)


from .loss_command import loss  # noqa: E402  -- the shortcut, on the group
experiment.add_command(loss)
