"""One profiled run: the program in the Sandbox with the sampling profiler attached
(instrumenter/profiler/), its samples gathered into a Profile and, with --record, written as
the patent's trace while the program runs (record.py)."""
from __future__ import annotations

import os
from dataclasses import dataclass

from ..sandbox import RunResult, Sandbox
from .lines import resolve_lines
from .model import Profile
from .progress import STEP as PROGRESS_STEP
from .record import TraceWriter
from .sink import ProfileSink


def host_path(sandbox: Sandbox, path: str) -> str:
    """Where the guest's file `path` is on the host: under the rootfs, else the same path."""
    if sandbox.rootfs is None:
        return path
    return os.path.join(sandbox.rootfs, path.lstrip("/"))


@dataclass
class ProfiledRun:
    profile: Profile
    result: RunResult


def run_profiled(sandbox: Sandbox, argv: list[str], *, interval: int, mode: str = "stack",
                 event: str = "insns", record: str | None = None, progress=None,
                 histogram: bool = False) -> ProfiledRun:
    """Run `argv` in `sandbox` with a sample every `interval` guest instructions (or system
    calls...: `event`; microseconds of host CPU time with event "host").

    `histogram`: in PC mode, let the timer's C handler count the ticks it takes per PC, so that
    the profile holds tallies (model.py) where it held those samples: the same report, folded
    stacks and lines, with no sample's own time (speedscope's and Chrome's files need it). Not
    with `record`, whose trace has every sample."""
    from instrumenter.profiler.sampler import EVENTS, MODES, Sampler
    from ..errors import UsageError

    if interval <= 0:
        raise UsageError("--interval must be a positive number of instructions")
    if mode not in MODES:
        raise UsageError(f"--mode {mode}: expected one of {', '.join(MODES)}")
    if event not in EVENTS:
        raise UsageError(f"--event {event}: expected one of {', '.join(EVENTS)}")
    profile = Profile(interval=interval, mode=mode, event=event, command=list(argv))
    writer = TraceWriter(record, profile) if record else None

    sink = ProfileSink(profile, writer, progress)
    doors = []
    counted = histogram and mode == "pc" and writer is None
    # (the terminal's status line moves every STEP samples: the tallies come at least as often)
    batch = PROGRESS_STEP if counted and progress is not None else None

    def attach(kernel, process) -> None:
        doors.append(kernel.debug)
        Sampler(kernel.debug, interval=interval, mode=mode, event=event, on_sample=sink.sample,
                on_module=sink.module, on_event=sink.event, batch=batch,
                on_tally=sink.tally if counted else None).attach(process)
        sink.startup(kernel.debug, process)

    sandbox.tools = [*sandbox.tools, attach]
    try:
        try:
            result = sandbox.run(argv)
        finally:
            for door in doors:
                door.disarm_timer()         # (the host clock's thread ends with its timer)
        profile.exit_code = result.exit_code
        resolve_lines(profile, lambda path: host_path(sandbox, path))
    finally:
        if progress is not None:
            progress.done()
        if writer is not None:
            writer.close(profile)
    return ProfiledRun(profile, result)
