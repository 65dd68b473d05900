"""`trapline trace`'s `--enable-at N` and `--disable-at N`: when each probe is on, in guest
instructions on the run's clock (the records' `ts`).

Each option applies to the `-p` written last before it on the command line, as ffmpeg's
per-output options apply to the output they precede (`-p A --enable-at 1000 -p B --disable-at
5000` enables A after 1000 instructions and disables B after 5000); a probe without them is
on from the start to the end. A probe enabled at E and disabled at D records exactly the hits
with E < ts <= D (instrumenter/tracing/dynamic.py). Click gives each option's values but not
how they interleave with -p's, so the command keeps the order the parser saw them in.
"""
import click

from ..errors import UsageError

ORDER_KEY = "trapline.option_order"
TIME_OPTIONS = ("enable_at", "disable_at")


class OrderedOptionsCommand(click.Command):
    """A command that records the order of its options on the command line (ctx.meta)."""

    def parse_args(self, ctx, args):
        _, _, order = self.make_parser(ctx).parse_args(args=list(args))
        ctx.meta[ORDER_KEY] = [param.name for param in order]
        return super().parse_args(ctx, args)


def probe_time_options(f):
    f = click.option("--disable-at", "disable_at", multiple=True, type=click.IntRange(min=0),
                     metavar="N", help="Disable the -p before it once N guest instructions "
                     "have run (it records hits with ts <= N).")(f)
    return click.option("--enable-at", "enable_at", multiple=True, type=click.IntRange(min=0),
                        metavar="N", help="Enable the -p before it once N guest instructions "
                        "have run (it records hits with ts > N).")(f)


def probe_times(ctx, specs, enable_at, disable_at) -> list[tuple[int, int | None]]:
    """(enable_at, disable_at) for each -p in order, from the options' command-line order."""
    values = {"enable_at": list(enable_at), "disable_at": list(disable_at)}
    times: list[dict] = []
    for name in ctx.meta.get(ORDER_KEY, ()):
        if name == "probes":
            times.append({})
        elif name in TIME_OPTIONS:
            option = "--" + name.replace("_", "-")
            value = values[name].pop(0)
            if not times:
                raise UsageError(f"{option} {value}: it applies to the -p before it, and none is")
            if name in times[-1]:
                raise UsageError(f"{option} given twice for -p {specs[len(times) - 1].text}")
            times[-1][name] = value
    result = []
    for spec, given in zip(specs, times):
        enable, disable = given.get("enable_at", 0), given.get("disable_at")
        if disable is not None and disable < enable:
            raise UsageError(f"-p {spec.text}: --disable-at {disable} comes before "
                             f"--enable-at {enable}")
        result.append((enable, disable))
    return result
