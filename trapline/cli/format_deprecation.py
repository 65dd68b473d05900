"""`trapline trace -f FORMAT`, the old spelling of `--format FORMAT` (issue 33).

`-f` means what strace's -f means in every command that runs a program: follow forks (-ff with
-o: one file per process). `trace` used to spell --format as -f; a command line written that
way still runs as it did, with a one-line deprecation warning on stderr: an `-f` that stands
among the command's own options and is followed by a format's name (`-f jsonl`, or `-fjsonl`)
is read as `--format NAME`. An `-f` elsewhere (after the program's name, or followed by
anything else) is left alone, so `trace -f -p ... -- prog` follows forks.
"""
import click

from .probe_times import OrderedOptionsCommand

FORMATS = ("text", "jsonl", "chrome", "folded")
WARNING = ("trapline: warning: trace -f {name} is deprecated: -f follows forks now (as strace's); "
           "use --format {name}")


def format_spelled_f(command: click.Command, ctx: click.Context, args: list[str]) -> list[str]:
    """`args` with each old `-f FORMAT` among the options rewritten `--format FORMAT` (and a
    warning said for it)."""
    args = list(args)
    index = 0
    while index < len(args):
        name = _old_format_at(args, index)
        if name is not None and _among_options(command, ctx, args[:index]):
            click.echo(WARNING.format(name=name), err=True)
            args[index:index + (1 if args[index] != "-f" else 2)] = ["--format", name]
        elif args[index] == "--":
            break
        index += 1
    return args


def _old_format_at(args: list[str], index: int) -> str | None:
    """The format's name if args[index] is `-f NAME` or `-fNAME`."""
    word = args[index]
    if word == "-f" and index + 1 < len(args) and args[index + 1] in FORMATS:
        return args[index + 1]
    if word.startswith("-f") and word[2:] in FORMATS:
        return word[2:]
    return None


def _among_options(command: click.Command, ctx: click.Context, before: list[str]) -> bool:
    """Whether everything before the word reads as the command's options alone (no program's
    name yet, no option left waiting for its value)."""
    try:
        values, rest, _ = command.make_parser(ctx).parse_args(args=list(before))
    except click.UsageError:
        return False
    # (the parser hands the words after the options to the command's arguments: PROGRAM...)
    return not isinstance(values.get("program"), str) and not rest and "--" not in before


class FormatDeprecatedCommand(OrderedOptionsCommand):
    """trace's command: the old `-f FORMAT` read as `--format FORMAT` before click parses."""

    def parse_args(self, ctx, args):
        return super().parse_args(ctx, format_spelled_f(self, ctx, args))
