"""`trapline run [--] PROGRAM [ARGS...]` with no option of its own, started without click (issue 31).

click and the command tree trapline.cli builds with it cost a static hello's start-up ~54 M of
its ~577 M instructions (cachegrind, x86-64: importing click 44 M, its command tree 10 M), and
a run with no option reads nothing from them: every option keeps its default. The console
script (trapline/entry.py) hands such an argv here; any other (an option before the program, a
missing program, another command, a shell completion request) goes to click as before, so that
its help, usage and errors stay click's. What the two paths give `run_guest` for the same argv
is compared, click's parse against this one, by tests/unit/trapline/test_plain_run.py.

The guest's run itself (`run_guest`) is the same function for both paths: the `run` command of
trapline/cli calls it once click has parsed its options.
"""
import os
import sys

from kernel_model.process.sched import DEFAULT_QUANTUM

from . import collector
from .host_signals import guest_command

# `run`'s options as click leaves them when none is given (trapline/cli: run_options,
# strace_options): what a plain run starts with.
DEFAULTS = {"rootfs": None, "cwd": None, "env": {}, "clear_env": False, "seed": 0, "writable": False,
            "strace": False, "follow_forks": 0, "quantum": DEFAULT_QUANTUM, "max_insns": 0,
            "verbose": False, "strace_options": None}


def plain_run_argv(argv: list[str]) -> tuple[str, tuple[str, ...]] | None:
    """(PROGRAM, ARGS) when argv is `run [--] PROGRAM [ARGS...]` with no option before the
    program; else None. Without `--`, a first word starting with '-' is an option for click to
    read or refuse; after the program every word is the program's, `--` included, as click
    parses a command that does not intersperse options (PROGRAM_COMMAND)."""
    if len(argv) < 2 or argv[0] != "run":
        return None
    if argv[1] == "--":
        rest = argv[2:]
    elif argv[1].startswith("-"):
        return None
    else:
        rest = argv[1:]
    if not rest:
        return None
    return rest[0], tuple(rest[1:])


def _completion_asked() -> bool:
    """click's shell completion is asked through _PROG_COMPLETE (click.core's
    _main_shell_completion, PROG from however trapline was started): click's to answer."""
    return any(name.startswith("_") and name.endswith("_COMPLETE") for name in os.environ)


def try_plain_run(argv: list[str]) -> None:
    """Run argv's guest and exit if argv is a plain run (module docstring); return otherwise."""
    plain = plain_run_argv(argv)
    if plain is None or _completion_asked():
        return
    program, args = plain
    try:
        guest_command(run_guest)(program=program, args=args, **DEFAULTS)
    except (EOFError, KeyboardInterrupt):
        _abort()                        # before the guest's handlers: click's main says the same
    except OSError as error:
        _broken_pipe(error)


def run_guest(rootfs, cwd, env, clear_env, seed, writable, strace, follow_forks, quantum, max_insns,
              verbose, program, args, strace_options):
    """Run PROGRAM [ARGS...] in the sandbox; exit with its status (128+N after signal N)."""
    from .sandbox import Sandbox

    collector.resume()
    sandbox = Sandbox(rootfs=rootfs, cwd=cwd, env=env, clear_env=clear_env, seed=seed,
                      writable=writable, strace=strace, verbose=verbose, capture=False,
                      follow_forks=bool(follow_forks), quantum=quantum, max_insns=max_insns,
                      strace_options=strace_options)
    try:
        result = sandbox.run([program, *args])
    except Exception as e:              # noqa: BLE001 -- every failure gets its status (exit_status.py)
        fail(e)
    sys.stdout.flush()
    sys.exit(result.exit_code)


def fail(error: BaseException) -> None:
    """One line (a traceback for a bug) and trapline's own exit status (exit_status.py)."""
    import click

    from .exit_status import exit_for
    exit_for(error, lambda text: click.echo(text, err=True))


def _abort() -> None:
    """click's main on EOFError or KeyboardInterrupt: an empty line, "Aborted!", status 1."""
    import click
    click.echo(file=sys.stderr)
    click.echo("Aborted!", file=sys.stderr)
    sys.exit(1)


def _broken_pipe(error: OSError) -> None:
    """click's main on EPIPE: further flushes of stdout and stderr are quiet, status 1."""
    import errno

    from click.utils import PacifyFlushWrapper
    if error.errno != errno.EPIPE:
        raise error
    sys.stdout = PacifyFlushWrapper(sys.stdout)
    sys.stderr = PacifyFlushWrapper(sys.stderr)
    sys.exit(1)
