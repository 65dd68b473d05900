"""The `trapline` command line (strace/bpftrace conventions).

`trapline run` must start at once, so each command imports what it needs when it runs: `run`
never imports the instrumenter (capstone, keystone), and `experiment`/`explain` live in their own
modules, imported only when named (LazyGroup).
"""
import importlib

import click

from kernel_model.process.sched import DEFAULT_QUANTUM

from ..version import __version__
from .. import collector
from .strace_options import NOT_HERE, strace_options
from ..host_signals import guest_command
from ..plain_run import fail, run_guest


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


_fail = fail        # one line (a traceback for a bug) and trapline's own exit status


def run_options(f, *, taken: frozenset = frozenset()):
    """Options shared by every command that runs a guest (-f is strace's in each of them:
    trace's old -f FORMAT is format_deprecation.py's), and strace's (strace_options.py) but for the spellings in `taken`, the command's own."""
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
        click.option("-f", "--follow-forks", count=True,
                     help="With --strace: trace child processes too ([pid N] prefixes); -ff with "
                     "-o FILE: one file FILE.PID per process."),
        click.option("--quantum", type=click.IntRange(min=1), default=DEFAULT_QUANTUM, show_default=True,
                     help="Guest instructions per time slice while several threads can run (a "
                     "slice ends at the first translated block that begins at or after them)."),
        click.option("--max-insns", type=click.IntRange(min=0), default=0,
                     help="Stop the run after about this many guest instructions (0: no limit)."),
        click.option("-v", "--verbose", is_flag=True, help="More diagnostics from trapline; with "
                     "--strace also strace's -v (structures and execve's environment in full)."),
    ]
    f = strace_options(f, taken=taken)
    for option in reversed(options):
        f = option(f)
    return f


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]},
             lazy_commands={"experiment": "trapline.experiments.cli:experiment",   # `trapline experiment loss`
                            "explain": "trapline.explain:explain",            # US 7,350,196's figures, run
                            "profile": "trapline.cli.profile:profile",       # US 7,823,129
                            "report": "trapline.cli.profile:report",
                            "gdbserver": "trapline.cli.gdbserver:gdbserver",  # GDB remote stub (US 6,957,421)
                            "check": "trapline.cli.check:check",              # strategies checked
                            "trace": "trapline.cli.trace:trace"})             # probes: the instrumenter
@click.version_option(__version__, "-V", "--version", prog_name="trapline",
                      message="%(prog)s -- version %(version)s")     # strace -V's wording
@click.pass_context
def main(ctx):
    """trapline: run and instrument x86/x86-64 Linux binaries in an emulated, modeled kernel."""
    if ctx.invoked_subcommand != "run":     # run resumes it once its own imports are done
        collector.resume()


@main.command(context_settings=PROGRAM_COMMAND, epilog=NOT_HERE)
@run_options
@click.argument("program")
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@guest_command
def run(rootfs, cwd, env, clear_env, seed, writable, strace, follow_forks, quantum, max_insns,
        verbose, program, args, strace_options):
    """Run PROGRAM [ARGS...] in the sandbox; exit with its status (128+N after signal N)."""
    run_guest(rootfs=rootfs, cwd=cwd, env=_parse_env(env), clear_env=clear_env, seed=seed,
              writable=writable, strace=strace, follow_forks=follow_forks, quantum=quantum,
              max_insns=max_insns, verbose=verbose, program=program, args=args,
              strace_options=strace_options)


if __name__ == "__main__":
    main()
