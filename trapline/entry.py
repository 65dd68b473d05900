"""The `trapline` command's entry point (the console script and `python -m trapline`): the
collector waits while the CLI's modules are imported (trapline/collector.py), which a
program importing trapline.cli as a library does not want done to it. A plain `trapline run
[--] PROGRAM [ARGS...]` starts without click (trapline/plain_run.py); every other command line
is click's (trapline/cli)."""
import sys

from . import collector

collector.pause()


def run() -> None:
    from .plain_run import try_plain_run
    try_plain_run(sys.argv[1:])         # exits when it ran the guest

    from .cli import main
    main()
