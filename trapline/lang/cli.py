"""`trapline trace -e 'PROGRAM' [-- CMD ARGS]`, `trapline trace FILE.bt [-- CMD ARGS]` and
`trapline trace -l PATTERN [-- CMD ARGS]`: the hook trace (trapline/cli/trace.py) hands these to.

Several -e and FILE.bt are several consumers (consumer.py), in the order given: the -e first,
then the files. Output goes to stdout (or -o FILE) in the order of the run; trapline's own lines (Attaching,
errors, attach points that found nothing) to stderr. The exit status is the guest's.
"""
import sys

import click

from ..errors import UsageError
from ..host_output import guarded

# trace's options that mean something to a run with consumers, as Sandbox's keywords
SANDBOX_KEYS = ("rootfs", "cwd", "clear_env", "seed", "writable", "quantum", "max_insns", "verbose")


def split_programs(program: str | None, args: tuple) -> tuple[list[str], list[str]]:
    """The leading FILE.bt arguments, and the command after them (without a `--`)."""
    positional = [program, *args] if program is not None else list(args)
    files = []
    while positional and positional[0].endswith(".bt"):
        files.append(positional.pop(0))
    if positional and positional[0] == "--":
        positional.pop(0)
    return files, positional


def sandbox_options(params: dict) -> dict:
    options = {key: params[key] for key in SANDBOX_KEYS if key in params}
    options["env"] = _environment(params.get("env") or ())
    options["follow_forks"] = bool(params.get("follow_forks"))
    return options


def trace_programs(ctx, expressions, list_pattern, probes, program, args) -> None:
    """Run (or list) and exit with the guest's status; bad input: one error, status 2."""
    from ..exit_status import exit_for
    try:
        code = _trace_programs(ctx, expressions, list_pattern, probes, program, args)
    except Exception as error:         # noqa: BLE001 -- every failure gets its status (exit_status.py)
        exit_for(error, lambda text: click.echo(text, err=True))
    sys.stdout.flush()
    sys.exit(code)


def _trace_programs(ctx, expressions, list_pattern, probes, program, args) -> int:
    files, argv = split_programs(program, args)
    options = sandbox_options(ctx.params)
    if list_pattern is not None:
        from .listing import listing
        for line in listing(list_pattern, argv, options):
            click.echo(line)
        return 0
    if probes:
        raise UsageError("-p probes and -e/FILE.bt programs do not mix: write the -p as a program "
                         "(uprobe:BIN:FUNC { ... })")
    if not argv:
        raise UsageError("no program to run: trace -e 'PROGRAM' -- CMD [ARGS]")
    sources = [(text, "-e") for text in expressions] + [(_read(path), path) for path in files]
    from .runner import count_probes, make_consumers, run
    from ..tracing import batch_for
    output = ctx.params.get("output")               # -o FILE: the consumers' output there
    out = guarded(output or sys.stdout)
    report = lambda line: click.echo(line, err=True)            # noqa: E731
    consumers = make_consumers(sources, out, report, batch=batch_for(output))
    probes_count = count_probes(consumers)
    report(f"Attaching {probes_count} probe{'s' * (probes_count != 1)}...")
    outcome = run(consumers, argv, options, strategy=ctx.params.get("strategy", "auto"),
                  children=ctx.params.get("children", "follow"))
    for line in outcome.unattached:
        report(f"trapline: {line}")
    for pid, count in outcome.lost.items():          # as bpftrace says "Lost N events"
        report(f"trapline: Lost {count} events (pid {pid}: its stored arguments' buffer was full)")
    return outcome.exit_code


def _environment(pairs) -> dict[str, str]:
    """-E K=V pairs (trapline/cli's own parser is not imported: trapline.cli imports this)."""
    env = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"-E {pair!r}: expected KEY=VALUE")
        env[key] = value
    return env


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as program:
            return program.read()
    except OSError as error:
        raise UsageError(f"{path}: {error.strerror}") from None
