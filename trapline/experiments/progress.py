"""The sweep's progress on a terminal: a rich bar with the last point finished and the ETA (on
stderr, and only when it is a terminal: a pipe or a file gets nothing)."""
from __future__ import annotations

import sys

from .runner import Progress


def bar() -> Progress | None:
    if not sys.stderr.isatty():
        return None
    from rich.console import Console
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress as RichProgress,
                               TextColumn, TimeElapsedColumn, TimeRemainingColumn)
    display = RichProgress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                           TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                           TextColumn("{task.fields[last]}"), console=Console(stderr=True),
                           transient=True)
    state = {}

    def start(total: int, done: int, where: str) -> None:
        display.start()
        state["task"] = display.add_task(f"points on {where}", total=total, completed=done, last="")

    def advance(index: int, params: dict) -> None:
        point = " ".join(f"{k}={v}" for k, v in params.items())
        display.update(state["task"], advance=1, last=f"done: {index} {point}"[:60])

    return Progress(start=start, advance=advance, stop=display.stop)
