"""`trapline trace`: run a program with probes (bpftrace's conventions for the records).

Its own module, imported when the command is named (LazyGroup), since its options come from the
instrumenter's strategy registry and a plain `run` imports nothing of the instrumenter.
"""
import functools
import sys

import click


from . import PROGRAM_COMMAND, _fail, _parse_env, run_options
from .strace_options import NOT_HERE
from .detach import detach_options, detach_starter
from .strategy_option import StrategyChoice
from .handler import handler_options
from .handler import load as load_handler
from .format_deprecation import FormatDeprecatedCommand
from .probe_times import probe_time_options, probe_times
from ..host_signals import guest_command


def _say_choice(probe, address: int, strategy: str) -> None:
    click.echo(f"trapline: {probe.spec.text} at {address:#x}: {strategy}", err=True)


@click.command(cls=FormatDeprecatedCommand, context_settings=PROGRAM_COMMAND, epilog=NOT_HERE)
@click.option("-e", "lang_programs", multiple=True, metavar="PROGRAM",
              help="A bpftrace program (trapline/lang); several -e (and FILE.bt) are consumers.")
@click.option("-l", "--list", "list_pattern", default=None, metavar="PATTERN",
              help="List the probes matching PATTERN (bpftrace -l) [of -- CMD and its libraries].")
@click.option("-p", "--probe", "probes", multiple=True, metavar="SPEC",
              help="uprobe:BIN:FUNC[+OFF] | uprobe:BIN:0xADDR | uretprobe:BIN:FUNC | syscall:NAME"
                   " | proc:fork|vfork|exec|exit | signal:NAME")
@probe_time_options
@detach_options
@click.option("--strategy", type=StrategyChoice(), default="auto", show_default=True)
@click.option("--native", default=None, metavar="count|args:N",
              help="Run the uprobes' action inside the guest (jump-placed probes; no trap per hit).")
@handler_options
@click.option("--children", type=click.Choice(["follow", "detach", "naive"]), default="follow",
              show_default=True, help="Children of a traced process: traced too (follow), run the "
              "original code (detach), or the naive tool of US 7,185,320 FIG. 1 (vfork deadlock).")
@click.option("--backpatch", type=click.Choice(["lazy", "eager"]), default="lazy", show_default=True,
              help="--children detach, vfork child: backpatch at its first hit (lazy) or at the "
              "pre-fork event (eager).")
@click.option("--format", "fmt", type=click.Choice(["text", "jsonl", "chrome", "folded"]), default="text",
              show_default=True, help="chrome: trace-event JSON (entry/return pairs as B/E); folded: "
              "stacks for flamegraph.pl. Both need -o FILE. "
              "(-f FORMAT, the old spelling, is deprecated.)")
@click.option("-o", "--output", type=click.File("w", lazy=False), default=None, help="Write events here (default: stdout).")
@click.option("-c", "--count", is_flag=True, help="Print a table of hits per probe at the end (stderr).")
@functools.partial(run_options, taken=frozenset({"-o", "--output", "-c", "-e"}))
@click.argument("program", required=False)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
@guest_command
def trace(ctx, lang_programs, list_pattern, probes, enable_at, disable_at, detach_after, detach_on, strategy, native, handler, handler_fxsave, children, backpatch, fmt, output, count, rootfs, cwd, env, clear_env, seed, writable, strace,
          follow_forks, quantum, max_insns, verbose, program, args, strace_options):
    """Run PROGRAM with probes; one event per hit (text or JSON Lines).

    --enable-at N and --disable-at N apply to the -p written last before them: that probe
    records the hits with N_enable < ts <= N_disable (ts: guest instructions run so far)."""
    from instrumenter.probes.definitions import UPROBE, Probe

    from ..errors import UsageError
    from ..probespec import parse_probe_spec
    from ..sandbox import Sandbox
    from ..tracing import hit_table

    if lang_programs or list_pattern is not None or (program or "").endswith(".bt"):
        from ..lang.cli import trace_programs          # the probe language (issue 34)
        trace_programs(ctx, lang_programs, list_pattern, probes, program, args)
    out = output or sys.stdout          # bpftrace prints events on stdout, between the guest's lines
    try:
        if not probes or program is None:
            raise UsageError("trace needs -p SPEC (or -e PROGRAM, FILE.bt, -l) and a program")
        specs = [parse_probe_spec(p) for p in probes]
        sink = _trace_sink(fmt, output, out, specs, program)
        times = probe_times(ctx, specs, enable_at, disable_at)
        if native is not None:                         # (capstone, keystone: only for --native)
            from instrumenter.strategies.native import parse_native
            parse_native(native)                       # a bad action: one line, before the run
        user_handler = load_handler(handler, handler_fxsave)
        sandbox = Sandbox(rootfs=rootfs, cwd=cwd, env=_parse_env(env), clear_env=clear_env, seed=seed,
                          writable=writable, strace=strace, verbose=verbose, capture=False,
                          follow_forks=bool(follow_forks), quantum=quantum, max_insns=max_insns,
                          strace_options=strace_options, probes=[Probe(s, native=native if s.kind == UPROBE else None,
                                        enable_at=on, disable_at=off,
                                        handler=user_handler if s.kind == UPROBE else None)
                                  for s, (on, off) in zip(specs, times)], strategy=strategy, on_choice=_say_choice if verbose else None,
                          sink=sink, children=children, backpatch=backpatch,
                          on_start=detach_starter(detach_after, detach_on, verbose))
        result = sandbox.run([program, *args])
    except Exception as e:              # noqa: BLE001 -- every failure gets its status (exit_status.py)
        _fail(e)
    if hasattr(sink, "close"):
        sink.close()
    if verbose:
        for line in result.monitor:
            click.echo(f"trapline: monitor: {line}", err=True)
    for line in result.unattached:       # as bpftrace says of a probe it could not attach
        click.echo(f"trapline: {line}", err=True)
    if count:
        click.echo(hit_table(sandbox.probes, result.dropped), err=True)
    elif result.dropped:
        click.echo(f"trapline: records dropped: {result.dropped}", err=True)
    sys.stdout.flush()
    sys.exit(result.exit_code)


def _trace_sink(fmt: str, output, out, specs, program: str):
    """Where trace's records go: streamed lines, or a chrome/folded document (trace_formats.py)
    that needs a file of its own, since the guest's output would fall into the middle of it."""
    from ..errors import UsageError
    from ..tracing import StreamSink, batch_for
    if fmt in ("text", "jsonl"):
        return StreamSink(out, fmt, batch=batch_for(output))
    if output is None:
        raise UsageError(f"--format {fmt} writes one document: give it a file with -o FILE")
    from ..trace_formats import ChromeSink, FoldedSink
    if fmt == "chrome":
        return ChromeSink(output, specs)
    return FoldedSink(output, specs, comm=program.rsplit("/", 1)[-1])
