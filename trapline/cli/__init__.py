"""The `trapline` command line (strace/bpftrace conventions).

`trapline run` must start at once, so each command imports what it needs when it runs: `run`
never imports the instrumenter (capstone, keystone), and `experiment`/`explain` live in their own
modules, imported only when named (LazyGroup).
"""
import functools
import importlib
import sys

import click


from instrumenter.strategies.registry import CHOICES as STRATEGY_CHOICES
from kernel_model.process.sched import DEFAULT_QUANTUM

from .detach import detach_options, detach_starter
from .probe_times import OrderedOptionsCommand, probe_time_options, probe_times
from .handler import handler_options
from .handler import load as load_handler
from ..host_signals import guest_command


class LazyGroup(click.Group):
    """A click group whose other commands are imported when used ("name": "module:attribute")."""

    def __init__(self, *args, lazy_commands: dict[str, str] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.lazy_commands = dict(lazy_commands or {})

    def list_commands(self, ctx):
        return sorted([*super().list_commands(ctx), *self.lazy_commands])

    def get_command(self, ctx, name):
        if name in self.lazy_commands and name not in self.commands:
            module, attribute = self.lazy_commands[name].split(":")
            self.add_command(getattr(importlib.import_module(module), attribute), name)
        return super().get_command(ctx, name)


# Commands that run PROGRAM [ARGS...] read their own options up to the program's name (or `--`),
# and everything after it is the program's, as strace, env and timeout(1) parse: `trapline run
# ls -l` gives ls its -l. An option before the program that the command does not have is an
# error naming it (click's "No such option", status 2), not the program's name (issue 26).
PROGRAM_COMMAND = {"allow_interspersed_args": False}


def _parse_env(pairs: tuple[str, ...]) -> dict[str, str]:
    env = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--env")
        env[key] = value
    return env


def _fail(error: BaseException) -> None:
    """One line (a traceback for a bug) and trapline's own exit status (exit_status.py)."""
    from ..exit_status import exit_for
    exit_for(error, lambda text: click.echo(text, err=True))


def _say_choice(probe, address: int, strategy: str) -> None:
    click.echo(f"trapline: {probe.spec.text} at {address:#x}: {strategy}", err=True)


def run_options(f, *, follow_short: bool = True):
    """Options shared by every command that runs a guest (`trace` keeps -f for --format)."""
    options = [
        click.option("--rootfs", type=click.Path(file_okay=False), default=None,
                     help="Folder that is the guest's /. Default: the host / read-only."),
        click.option("--cwd", default=None,
                     help="Guest working directory. Default: / with --rootfs, else the current one."),
        click.option("-E", "--env", "env", multiple=True, metavar="K=V", help="Set a guest variable."),
        click.option("--clear-env", is_flag=True, help="Start from an empty environment."),
        click.option("--seed", type=int, default=0, show_default=True,
                     help="Seed of AT_RANDOM, getrandom and /dev/urandom."),
        click.option("--writable", is_flag=True,
                     help="Write through to the rootfs folder (default: in-memory overlay)."),
        click.option("--strace", is_flag=True, help="Print system calls on stderr, strace-style."),
        click.option(*(("-f", "--follow-forks") if follow_short else ("--follow-forks",)), is_flag=True,
                     help="With --strace: trace child processes too ([pid N] prefixes)."),
        click.option("--quantum", type=click.IntRange(min=1), default=DEFAULT_QUANTUM, show_default=True,
                     help="Guest instructions per time slice while several threads can run."),
        click.option("--max-insns", type=click.IntRange(min=0), default=0,
                     help="Stop the run after about this many guest instructions (0: no limit)."),
        click.option("-v", "--verbose", is_flag=True, help="More diagnostics from trapline."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]},
             lazy_commands={"experiment": "trapline.experiment:experiment",   # `trapline experiment loss`
                            "explain": "trapline.explain:explain",            # US 7,350,196's figures, run
                            "profile": "trapline.cli.profile:profile",       # issue 18, US 7,823,129
                            "report": "trapline.cli.profile:report",
                            "gdbserver": "trapline.cli.gdbserver:gdbserver"})  # GDB remote stub (US 6,957,421)
def main():
    """trapline: run and instrument x86/x86-64 Linux binaries in an emulated, modeled kernel."""


@main.command(context_settings=PROGRAM_COMMAND)
@run_options
@click.argument("program")
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@guest_command
def run(rootfs, cwd, env, clear_env, seed, writable, strace, follow_forks, quantum, max_insns,
        verbose, program, args):
    """Run PROGRAM [ARGS...] in the sandbox; exit with its status (128+N after signal N)."""
    from ..sandbox import Sandbox

    sandbox = Sandbox(rootfs=rootfs, cwd=cwd, env=_parse_env(env), clear_env=clear_env, seed=seed,
                      writable=writable, strace=strace, verbose=verbose, capture=False,
                      follow_forks=follow_forks, quantum=quantum, max_insns=max_insns)
    try:
        result = sandbox.run([program, *args])
    except Exception as e:              # noqa: BLE001 -- every failure gets its status (exit_status.py)
        _fail(e)
    sys.stdout.flush()
    sys.exit(result.exit_code)


@main.command(cls=OrderedOptionsCommand, context_settings=PROGRAM_COMMAND)
@click.option("-p", "--probe", "probes", multiple=True, required=True, metavar="SPEC",
              help="uprobe:BIN:FUNC[+OFF] | uprobe:BIN:0xADDR | uretprobe:BIN:FUNC | syscall:NAME"
                   " | proc:fork|vfork|exec|exit | signal:NAME")
@probe_time_options
@detach_options
@click.option("--strategy", type=click.Choice(STRATEGY_CHOICES), default="auto", show_default=True)
@click.option("--native", default=None, metavar="count|args:N",
              help="Run the uprobes' action inside the guest (jump-placed probes; no trap per hit).")
@handler_options
@click.option("--children", type=click.Choice(["follow", "detach", "naive"]), default="follow",
              show_default=True, help="Children of a traced process: traced too (follow), run the "
              "original code (detach), or the naive tool of US 7,185,320 FIG. 1 (vfork deadlock).")
@click.option("--backpatch", type=click.Choice(["lazy", "eager"]), default="lazy", show_default=True,
              help="--children detach, vfork child: backpatch at its first hit (lazy) or at the "
              "pre-fork event (eager).")
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "jsonl", "chrome", "folded"]), default="text",
              show_default=True, help="chrome: trace-event JSON (entry/return pairs as B/E); folded: "
              "stacks for flamegraph.pl. Both need -o FILE.")
@click.option("-o", "--output", type=click.File("w", lazy=False), default=None, help="Write events here (default: stdout).")
@click.option("-c", "--count", is_flag=True, help="Print a table of hits per probe at the end (stderr).")
@functools.partial(run_options, follow_short=False)
@click.argument("program")
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
@guest_command
def trace(ctx, probes, enable_at, disable_at, detach_after, detach_on, strategy, native, handler, handler_fxsave, children, backpatch, fmt, output, count, rootfs, cwd, env, clear_env, seed, writable, strace,
          follow_forks, quantum, max_insns, verbose, program, args):
    """Run PROGRAM with probes; one event per hit (text or JSON Lines).

    --enable-at N and --disable-at N apply to the -p written last before them: that probe
    records the hits with N_enable < ts <= N_disable (ts: guest instructions run so far)."""
    from instrumenter.strategies.native import parse_native
    from instrumenter.probes.definitions import UPROBE, Probe

    from ..probespec import parse_probe_spec
    from ..sandbox import Sandbox
    from ..tracing import hit_table

    out = output or sys.stdout          # bpftrace prints events on stdout, between the guest's lines
    try:
        specs = [parse_probe_spec(p) for p in probes]
        sink = _trace_sink(fmt, output, out, specs, program)
        times = probe_times(ctx, specs, enable_at, disable_at)
        if native is not None:
            parse_native(native)                       # a bad action: one line, before the run
        user_handler = load_handler(handler, handler_fxsave)
        sandbox = Sandbox(rootfs=rootfs, cwd=cwd, env=_parse_env(env), clear_env=clear_env, seed=seed,
                          writable=writable, strace=strace, verbose=verbose, capture=False,
                          follow_forks=follow_forks, quantum=quantum, max_insns=max_insns,
                          probes=[Probe(s, native=native if s.kind == UPROBE else None,
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
        raise UsageError(f"-f {fmt} writes one document: give it a file with -o FILE")
    from ..trace_formats import ChromeSink, FoldedSink
    if fmt == "chrome":
        return ChromeSink(output, specs)
    return FoldedSink(output, specs, comm=program.rsplit("/", 1)[-1])


if __name__ == "__main__":
    main()
