"""`trapline profile` and `trapline report` (issue 18, US 7,823,129's tprof phase)."""
import functools
import sys

import click

from . import PROGRAM_COMMAND, _fail, _parse_env, run_options
from .strace_options import NOT_HERE
from .strategy_option import StrategyChoice
from .walkup import walkup_options, walkup_settings
from ..host_signals import guest_command

TOP_FUNCTIONS = 25


@click.command(context_settings=PROGRAM_COMMAND, epilog=NOT_HERE)
@click.option("--interval", type=click.IntRange(min=1), default=10_000, show_default=True,
              help="Sample every N guest instructions, or N system calls, taken branches or page "
              "faults with --event (virtual time: the same run, the same samples).")
@click.option("--event", type=click.Choice(["insns", "syscalls", "branches", "faults"]), default="insns",
              show_default=True, help="What --interval counts: guest instructions, system calls, "
              "taken branches or page faults.")
@click.option("--clock", type=click.Choice(["virtual", "host"]), default="virtual", show_default=True,
              help="virtual: sample on --event's count (deterministic); host: sample --freq times a "
              "second of the host's CPU time, as perf's cpu-clock (cheaper, not deterministic).")
@click.option("-F", "--freq", type=click.IntRange(min=1, max=100_000), default=1000, show_default=True,
              help="Samples per second of host CPU time, with --clock host.")
@click.option("--mode", type=click.Choice(["stack", "pc"]), default="stack", show_default=True,
              help="stack: unwind each sample (frame pointers and .eh_frame CFI); pc: the PC only.")
@click.option("--top", type=click.IntRange(min=1), default=None,
              help="Functions shown in the report (25); with --walk-up also the hot spots taken "
              "per window when none reaches --threshold (3).")
@click.option("-o", "--output-dir", default=None, metavar="DIR",
              help="Write folded stacks, speedscope JSON, Chrome trace JSON and a flame graph here "
              "(and walkup.json with --walk-up).")
@click.option("--record", default=None, metavar="FILE",
              help="Write the trace (start-up, sample, interrupt, thread-switch, module and "
              "walk-up records) to FILE; `trapline report FILE` reads it back.")
@click.option("--strategy", type=StrategyChoice(), default="auto", show_default=True,
              help="With --walk-up: the strategy its hooks are placed with (ours, "
              "package.module:Class or an installed package's entry point, as trace's).")
@walkup_options
@functools.partial(run_options, taken=frozenset({"-o"}))
@click.argument("program")
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@guest_command
def profile(interval, event, clock, freq, mode, top, output_dir, record, strategy, walk_up, threshold, window, min_calls,
            metric, period, max_levels, exclusive, compare_full, rootfs, cwd, env, clear_env, seed, writable,
            strace, follow_forks, quantum, max_insns, verbose, program, args, strace_options):
    """Run PROGRAM [ARGS...] under the sampling profiler; report where it spends its time."""
    from rich.console import Console

    from ..profile.outputs import prepare_output_dir, write_outputs
    from ..profile.progress import ProfileProgress
    from ..profile.report import print_report
    from ..profile.session import run_profiled
    from ..sandbox import Sandbox

    console = Console(stderr=True, highlight=False)
    if clock == "host":                 # a tick every 1/freq s of CPU time, in µs
        interval, event = max(1, 1_000_000 // freq), "host"
    try:
        if output_dir is not None:
            prepare_output_dir(output_dir)
        sandbox = Sandbox(rootfs=rootfs, cwd=cwd, env=_parse_env(env), clear_env=clear_env, seed=seed,
                          writable=writable, strace=strace, verbose=verbose, capture=False,
                          follow_forks=bool(follow_forks), quantum=quantum, max_insns=max_insns,
                          strace_options=strace_options, strategy=strategy)
        progress = ProfileProgress.for_terminal(sys.stderr, program.rsplit("/", 1)[-1])
        if walk_up:
            run = _walk_up(sandbox, [program, *args], console, interval=interval, mode=mode,
                           event=event, top=top,
                           options=walkup_settings(threshold, top, window, min_calls, metric,
                                                   period, max_levels, exclusive), compare_full=compare_full,
                           record=record, progress=progress)
        else:
            # --mode pc counts its samples per PC in C unless -o's timelines need each one
            run = run_profiled(sandbox, [program, *args], interval=interval, mode=mode, event=event,
                               record=record, progress=progress, histogram=output_dir is None)
            sys.stdout.flush()
            print_report(run.profile, console, top=top or TOP_FUNCTIONS)
        if output_dir is not None:
            walkup = None
            if walk_up:
                from ..profile.walkup_report import walkup_json
                walkup = walkup_json(run)
            for note in write_outputs(run.profile, output_dir, " ".join([program, *args]), walkup):
                console.print(f"trapline: {note}", soft_wrap=True, markup=False)   # one line: a Unix tool's message
    except Exception as e:              # noqa: BLE001 -- every failure gets its status (exit_status.py)
        _fail(e)
    sys.exit(run.result.exit_code)


def _walk_up(sandbox, argv, console, *, interval, mode, event, top, options, compare_full,
             record=None, progress=None):
    """The walk-up run (trapline/profile/walkup_run.py) and its report."""
    from ..profile.report import print_report
    from ..profile.walkup_report import finish_record, print_walkup
    from ..profile.walkup_run import compare, run_walkup

    run = run_walkup(sandbox, argv, interval=interval, options=options, mode=mode, event=event,
                     record=record, progress=progress)
    sys.stdout.flush()
    try:
        if compare_full and not run.result.interrupted:    # (Ctrl-C: the report of what ran)
            if progress is not None:        # the full run may take minutes: say what runs
                progress.phase("comparing: the run with no tool, then with every function hooked")
            compare(sandbox, argv, run)
    finally:
        if progress is not None:
            progress.done()
        finish_record(run)          # the trace ends with the walk-up's report (and comparison)
    print_report(run.profile, console, top=top or TOP_FUNCTIONS)
    console.print()
    print_walkup(run, console)
    return run


@click.command()
@click.option("--top", type=click.IntRange(min=1), default=TOP_FUNCTIONS, show_default=True)
@click.option("-o", "--output-dir", default=None, metavar="DIR",
              help="Write the same files as `trapline profile -o` (walkup.json and the walk-up's "
              "Chrome-trace events too, from a --walk-up trace).")
@click.argument("trace", type=click.Path(dir_okay=False))
def report(top, output_dir, trace):
    """Report a trace written by `trapline profile --record` (the same report as the live run)."""
    from rich.console import Console

    from ..profile.outputs import prepare_output_dir, write_outputs
    from ..profile.record import read_trace
    from ..profile.report import print_report

    console = Console(highlight=False)
    try:
        if output_dir is not None:
            prepare_output_dir(output_dir)
        recorded = read_trace(trace)
        print_report(recorded, console, top=top)
        if recorded.walkup is not None:
            from ..profile.walkup_report import print_walkup_report
            console.print()
            print_walkup_report(recorded.walkup, console)
        if output_dir is not None:
            # a recorded walk-up's report: the live run's walkup.json and Chrome-trace events
            for note in write_outputs(recorded, output_dir, " ".join(recorded.command), recorded.walkup):
                console.print(f"trapline: {note}", soft_wrap=True, markup=False)   # one line: a Unix tool's message
    except Exception as e:              # noqa: BLE001
        _fail(e)
