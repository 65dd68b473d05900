"""Where a profiled run's sampler records go: into the Profile, and into the trace being
written with --record (record.py) once its start-up records are out — the same for a plain
profile (session.py) and a walk-up run (walkup_run.py)."""
from __future__ import annotations

from .model import Profile


class ProfileSink:
    def __init__(self, profile: Profile, writer=None, progress=None):
        self.profile, self.writer, self.progress = profile, writer, progress
        if writer is None and progress is None:
            # Nothing but the Profile takes the records: the sampler calls its methods
            # directly, a call fewer a sample (thousands a second of captured ticks).
            self.sample, self.event, self.tally = profile.add, profile.add_event, profile.add_tally

    def sample(self, sample) -> None:
        self.profile.add(sample)
        if self.writer is not None:
            self.writer.sample(sample)
        if self.progress is not None:           # progress.py: the terminal's status line
            self.progress.sample(sample)

    def tally(self, sample, n: int) -> None:
        """`n` ticks at `sample`'s PC (the timer's histogram: never with a trace being written)."""
        self.profile.add_tally(sample, n)
        if self.progress is not None:
            self.progress.tally(sample, n)

    def module(self, load) -> None:
        self.profile.add_module(load)
        if self.writer is not None and self.writer.started:
            self.writer.module(load)

    def event(self, happened) -> None:
        """An Interrupt, ThreadSwitch or ModuleUnload of the sampler."""
        self.profile.add_event(happened)
        if self.writer is not None and self.writer.started:
            self.writer.event(happened)

    def startup(self, door, process) -> None:
        """The trace's start-up records: the threads that exist and the modules loaded so far."""
        if self.writer is not None:
            comm = process.exe.rsplit(b"/", 1)[-1].decode(errors="replace")
            self.writer.startup([(process.pid, t.tid, comm) for t in door.live_threads(process)],
                                self.profile.modules)
