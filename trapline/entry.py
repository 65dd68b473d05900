"""The `trapline` command's entry point (the console script and `python -m trapline`): the
collector waits while the CLI's modules are imported (trapline/collector.py), which a
program importing trapline.cli as a library does not want done to it."""
from . import collector

collector.pause()

from .cli import main  # noqa: E402


def run() -> None:
    main()
