"""`trapline check`: the trampoline-correctness battery (trapline/testing) run against
strategies — ours, a user's `package.module:Class`, or an installed package's entry point —
(single-instruction relocation, probed sequences, and whole programs: process trees with
fork/vfork/exec, threads at small quanta, removal and detach at any point),
with a progress line per property, a table at the end, and each failure as hypothesis's
shrunk counterexample with a reproducer. Exit 1 when a property failed, 2 when a strategy
could not be checked at all (one line each), else 0.

`--self-test` checks the battery instead: bugs planted one at a time into a copy of the
built-in relocator (trapline/testing/planted.py) must each be caught.
"""
from __future__ import annotations

import json
import shlex
import sys

import click

ARCH_CHOICES = ("i386", "x86_64", "all")


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--strategy", "strategies", multiple=True, metavar="S",
              help="A strategy: ours by name, package.module:Class, or an installed package's "
                   "entry point (trapline.strategies). Repeatable. Default: trampoline, jump and "
                   "every installed one.")
@click.option("--arch", type=click.Choice(ARCH_CHOICES), default="all", show_default=True)
@click.option("--examples", type=click.IntRange(min=1), default=30, show_default=True,
              help="Examples per case (the ci profile's 30; a sixth, at least 3, per form).")
@click.option("--seed", type=int, default=0, show_default=True, help="hypothesis's seed.")
@click.option("--classes", default=None, metavar="C,...",
              help="Instruction classes of the relocation property (default: all).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
@click.option("--time-limit", type=click.FloatRange(min=0.1), default=10.0, show_default=True,
              metavar="SECONDS", help="An example still running after this long fails its "
              "property as a hang (a strategy that never returns).")
@click.option("--host/--no-host", default=True, show_default=True,
              help="Also run the relocation property on the host CPU (x86-64 Linux hosts).")
@click.option("--self-test", is_flag=True,
              help="Plant known relocation bugs in a copy of our relocator; each must be caught.")
@click.option("--replay", "replay", default=None, metavar="CASE",
              help="Run exactly this case (a report's `@example(case=...)` text) against the "
              "strategies' properties that take it, once: a failure's report again, whatever "
              "the generators draw today.")
def check(strategies, arch, examples, seed, classes, fmt, time_limit, host, self_test, replay):
    """Check strategies' relocation and probed programs against the original's behaviour."""
    from instrumenter.errors import StrategyError
    from trapline.testing.instructions import class_names
    from trapline.testing.subjects import default_names, subject

    arches = ("i386", "x86_64") if arch == "all" else (arch,)
    case = None
    if replay is not None:
        from trapline.testing.replay import case_arch, parse_case
        try:
            case = parse_case(replay)
        except ValueError as bad:
            raise click.BadParameter(str(bad), param_hint="--replay") from None
        arches = (case_arch(case),)
    chosen = [c.strip() for c in classes.split(",")] if classes else None
    unknown = [c for c in chosen or () if c not in class_names()]
    if unknown:
        raise click.BadParameter(f"no class {', '.join(unknown)} (have: "
                                 f"{', '.join(class_names())})", param_hint="--classes")
    if self_test:
        from trapline.testing.planted import kill_table, render_kill_table
        rows = kill_table(arches, examples=examples, seed=seed, progress=_progress_line(fmt))
        _emit_kill_table(rows, fmt, render_kill_table)
        sys.exit(0 if all(r.caught or r.not_applicable for r in rows) else 1)
    subjects, bad = [], 0
    for name in strategies or default_names():
        try:
            subjects.append(subject(name))
        except StrategyError as error:
            click.echo(f"trapline: {error}", err=True)
            bad += 1
    command = _command(strategies, arch, examples, seed, classes, time_limit, host)
    tallies = _run(subjects, arches, examples, seed, chosen, command, fmt, host and _host_ok(fmt),
                   time_limit, case, programs=chosen is not None or _samples_ok())
    if case is not None and not tallies and subjects:
        click.echo(f"trapline: no property of {', '.join(s.name for s in subjects)} takes a "
                   f"{type(case).__name__}", err=True)
        sys.exit(2)
    _emit(tallies, fmt)
    if any(t.failure for t in tallies):
        sys.exit(1)
    sys.exit(2 if bad or any(t.error for t in tallies) else 0)


def _command(strategies, arch, examples, seed, classes, time_limit, host) -> str:
    """The command that reproduces this run's output (the options that change it)."""
    words = ["trapline", "check"]
    for s in strategies:
        words += ["--strategy", s]
    words += ["--arch", arch, "--examples", str(examples), "--seed", str(seed)]
    if classes:
        words += ["--classes", classes]
    if time_limit != 10.0:
        words += ["--time-limit", f"{time_limit:g}"]
    if not host:
        words.append("--no-host")
    return shlex.join(words)


def _host_ok(fmt: str) -> bool:
    from trapline.testing.host import host_unavailable
    why = host_unavailable()
    if why is not None:
        click.echo(f"trapline: no host CPU oracle: {why}", err=True)
    return why is None


def _replay_words(name: str, time_limit: float, host: bool) -> list[str]:
    """`trapline check` replaying one case against `name` (the case's text comes last)."""
    words = ["trapline", "check", "--strategy", name]
    if time_limit != 10.0:
        words += ["--time-limit", f"{time_limit:g}"]
    if not host:
        words.append("--no-host")
    return words + ["--replay"]


def _samples_ok() -> bool:
    """The whole-program properties run the shipped samples: where none are found, say so."""
    from trapline.testing.guests import samples_unavailable
    why = samples_unavailable()
    if why is not None:
        click.echo(f"trapline: no whole-program properties: {why}", err=True)
    return why is None


def _run(subjects, arches, examples, seed, classes, command, fmt, host: bool, time_limit: float,
         case=None, programs: bool = True):
    from trapline.testing import battery
    from trapline.testing.replay import replayed
    say = _progress_line(fmt)
    tallies = []
    for subj in subjects:
        replay = _replay_words(subj.name, time_limit, host)
        for arch in arches:
            props = battery.properties(subj, arch, examples, classes, host=host, programs=programs)
            for prop in props if case is None else replayed(props, case):
                tally = battery.Tally(prop.name, subj.name, arch)
                total = sum(c.examples for c in prop.plan)
                with _progress(fmt, f"{subj.name} {prop.name} {arch}", total) as tick:
                    try:
                        battery.run_cases(tally, prop.plan, prop.body, seed=seed, on_example=tick,
                                          reproduce=_reproducer(None if case else command,
                                                                "case", replay),
                                          time_limit=time_limit)
                    except Exception as e:     # noqa: BLE001 -- e.g. a constructor's StrategyError
                        tally.error = f"{type(e).__name__}: {e}"
                tallies.append(tally)
                say(tally)
    return tallies


def _reproducer(command: str, argument: str, replay: list[str]):
    """The run's command and seed (the same examples while the generators draw the same way),
    the case as a test's `@example` line, and the command that replays exactly that case
    (a replay's own report has no seed: it drew nothing)."""
    def lines(case, example) -> list[str]:
        return ["  reproduce:", *([f"    {command}"] if command else []),
                f"    @example({argument}={example!r})",
                f"    {shlex.join(replay)} {_quoted(repr(example))}"]
    return lines


def _quoted(text: str) -> str:
    """`text` as one shell word: in double quotes when nothing in it is special there (a
    case's repr is full of single quotes, which shlex would break into '"'"' runs)."""
    return f'"{text}"' if not set(text) & set('"$`\\!') else shlex.quote(text)


class _NoProgress:
    def __enter__(self):
        return lambda: None

    def __exit__(self, *exc):
        return False


class _Progress:
    """A rich progress bar for one property (on a terminal only: a pipe gets one line at the
    end of each property instead, so output stays the same from run to run)."""

    def __init__(self, title: str, total: int):
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
        self.progress = Progress(TextColumn("{task.description}"), BarColumn(),
                                 MofNCompleteColumn(), console=Console(stderr=True),
                                 transient=True)
        self.task = self.progress.add_task(title, total=total)

    def __enter__(self):
        self.progress.start()
        return lambda: self.progress.advance(self.task)

    def __exit__(self, *exc):
        self.progress.stop()
        return False


def _progress(fmt: str, title: str, total: int):
    return _Progress(title, total) if fmt == "text" and sys.stderr.isatty() else _NoProgress()


def _progress_line(fmt: str):
    def say(tally) -> None:
        if fmt == "text" and not sys.stderr.isatty():
            state = "FAILED" if tally.failure else ("error" if tally.error else "ok")
            click.echo(f"trapline: {tally.subject} {tally.prop} {tally.arch}: {tally.run} "
                       f"examples, {state}", err=True)
    return say


def _emit(tallies, fmt: str) -> None:
    if fmt == "json":
        click.echo(json.dumps([_as_json(t) for t in tallies], indent=2))
        return
    for tally in tallies:
        if tally.failure:
            click.echo(f"FAILED: {tally.subject} {tally.prop} {tally.arch}")
            click.echo("\n".join(tally.failure))
            click.echo()
        if tally.error:
            click.echo(f"ERROR: {tally.subject} {tally.prop} {tally.arch}: {tally.error}")
    click.echo(_table(tallies))


def _as_json(tally) -> dict:
    return {"strategy": tally.subject, "property": tally.prop, "arch": tally.arch,
            "run": tally.run, "accepted": tally.accepted, "refused": dict(sorted(tally.refused.items())),
            "skipped": tally.skipped, "failed": tally.failed, "caught_at": tally.caught_at,
            "failure": tally.failure, "error": tally.error}


def _table(tallies) -> str:
    from io import StringIO

    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table
    table = Table(title="trapline check")
    for column in ("strategy", "property", "arch", "run", "accepted", "refused", "skipped", "failed"):
        table.add_column(column, justify="right" if column in ("run", "accepted", "skipped",
                                                               "failed") else "left")
    for t in tallies:
        refused = "; ".join(f"{n}x {r}" for r, n in sorted(t.refused.items(), key=lambda i: -i[1]))
        table.add_row(escape(t.subject), escape(t.prop), t.arch, str(t.run), str(t.accepted),
                      escape(str(sum(t.refused.values())) + (f" ({refused})" if refused else "")),
                      str(t.skipped), "error" if t.error else str(t.failed))
    out = StringIO()
    Console(file=out, width=160, color_system=None).print(table)
    return out.getvalue().rstrip()


def _emit_kill_table(rows, fmt: str, render) -> None:
    if fmt == "json":
        click.echo(json.dumps([row.as_json() for row in rows], indent=2))
    else:
        click.echo(render(rows))
