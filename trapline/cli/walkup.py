"""`trapline profile --walk-up` options (issue 18, US 7,823,129's walk up the call graph): the hot-spot
decision, the metric and period of each level, and the perturbation comparison."""
import click

WALKUP_TOP = 3          # hot spots per window when none reaches --threshold (no --top given)


def walkup_options(command):
    """The walk-up's options, added to `trapline profile`."""
    options = [
        click.option("--walk-up/--no-walk-up", "walk_up", default=False,
                     help="Walk up the call graph from the hot spots (US 7,823,129): hook each hot "
                     "function's entry, instrument its callers, level by level, removing hooks."),
        click.option("--threshold", type=click.FloatRange(min=0, min_open=True, max=100), default=10.0,
                     show_default=True, help="A function with this percent of a window's samples is hot."),
        click.option("--window", type=click.IntRange(min=1), default=50, show_default=True,
                     help="Samples per hot-spot decision (re-evaluated every window)."),
        click.option("--min-calls", type=click.IntRange(min=1), default=1, show_default=True,
                     help="Invocations of a hot function its identifying hook waits for before "
                     "instrumenting the callers it saw."),
        click.option("--metric", type=click.Choice(["calls", "insns", "time"]), default="calls",
                     show_default=True, help="What --period counts at each level: invocations, "
                     "guest instructions inside, or virtual nanoseconds inside."),
        click.option("--period", type=click.IntRange(min=1), default=50, show_default=True,
                     help="How long a level stays instrumented before the walk goes up (in --metric units)."),
        click.option("--max-levels", type=click.IntRange(min=1), default=8, show_default=True,
                     help="Levels above a hot spot the walk may instrument."),
        click.option("--exclusive", type=click.Choice(["off", "exact"]), default="off", show_default=True,
                     help="Each level's exclusive metric (inclusive less its callees'): 'exact' keeps "
                     "the callees a measured level calls hooked to time them, at a price in hooks; "
                     "'off' places no such hooks and reports no exclusive figure."),
        click.option("--compare-full/--no-compare-full", default=False,
                     help="Also run the program with no tool and with every function hooked, and "
                     "report hooks executed and guest instructions added (exact)."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def walkup_settings(threshold, top, window, min_calls, metric, period, max_levels, exclusive):
    from instrumenter.profiler.walkup import WalkUpOptions
    return WalkUpOptions(threshold=threshold, top=top or WALKUP_TOP, window=window,
                         min_calls=min_calls, metric=metric, period=period, max_levels=max_levels,
                         exclusive=exclusive)
