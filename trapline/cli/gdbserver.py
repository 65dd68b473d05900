"""`trapline gdbserver`: run PROGRAM (probed with -p, as `trapline trace`) under the US 6,957,421
debugger and serve it to GDB over the remote serial protocol, as gdbserver does.

    gdb -ex 'target remote | trapline gdbserver --stdio -p uprobe:fib:fib -- samples/bin/x86_64/fib 5' fib
    trapline gdbserver --listen localhost:1234 -- PROGRAM ARGS   then in gdb: target remote :1234

With --stdio the protocol owns stdin and stdout: the program's stdin is /dev/null and its
stdout goes to stderr (gdbserver's own rule for a stdio connection). Probe records go to -o
FILE, or to stderr.

GDB's `detach` removes GDB's breakpoints and lets the program run on with its probes, as it
ran before the debugger came; with --detach-probes it detaches the probes too (US 6,957,421,
US 7,017,153: instrumenter/tracing/detach.py): the records stop at the detach and the program
runs to its end as if it had never been probed. (`detach` of one fork child GDB does not
follow, D;PID, leaves the probes alone either way.)
"""
import functools
import sys

import click

from . import PROGRAM_COMMAND, _fail, _parse_env, run_options
from .strace_options import NOT_HERE
from .strategy_option import StrategyChoice
from ..host_signals import guest_command


def _listen_address(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit():
        raise click.BadParameter(f"{text!r} is not HOST:PORT", param_hint="--listen")
    return host or "localhost", int(port)


@click.command(context_settings=PROGRAM_COMMAND, epilog=NOT_HERE)
@click.option("--listen", metavar="HOST:PORT", default=None, help="Wait for GDB on this TCP address.")
@click.option("--stdio", is_flag=True, help="Talk to GDB on stdin/stdout (target remote | ...).")
@click.option("-p", "--probe", "probes", multiple=True, metavar="SPEC", help="A probe, as for trace.")
@click.option("--strategy", type=StrategyChoice(), default="auto", show_default=True)
@click.option("-o", "--output", type=click.File("w", lazy=False), default=None,
              help="Write probe records here (default: stderr).")
@click.option("--debug-protocol", is_flag=True, help="Log every packet on stderr.")
@click.option("--detach-probes", is_flag=True,
              help="GDB's detach detaches the probes too: the program runs on unprobed.")
@functools.partial(run_options, taken=frozenset({"-o", "--output"}))
@click.argument("program")
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@guest_command
def gdbserver(listen, stdio, probes, strategy, output, debug_protocol, detach_probes, rootfs, cwd, env, clear_env,
              seed, writable, strace, follow_forks, quantum, max_insns, verbose, program, args,
              strace_options):
    """Debug PROGRAM [ARGS...] with GDB through its probes (US 6,957,421)."""
    from ..gdbserver.session import DebugRun

    try:
        if stdio == (listen is not None):
            raise click.UsageError("give exactly one of --stdio and --listen HOST:PORT")
        address = _listen_address(listen) if listen is not None else None
        run = DebugRun(program=program, args=list(args), probes=list(probes), strategy=strategy,
                       records=output or sys.stderr, stdio=stdio, address=address,
                       detach_probes=detach_probes,
                       log=(lambda line: print(f"gdbserver: {line}", file=sys.stderr))
                       if debug_protocol else None,
                       sandbox_options=dict(rootfs=rootfs, cwd=cwd, env=_parse_env(env),
                                            clear_env=clear_env, seed=seed, writable=writable,
                                            strace=strace, verbose=verbose,
                                            follow_forks=bool(follow_forks),
                                            strace_options=strace_options,
                                            quantum=quantum, max_insns=max_insns))
        result = run.run()
    except Exception as e:              # noqa: BLE001 -- every failure gets its status (exit_status.py)
        _fail(e)
    for line in result.unattached:       # as trace says it (tracing/unattached.py)
        click.echo(f"trapline: {line}", err=True)
    sys.stdout.flush()
    sys.exit(result.exit_code)
