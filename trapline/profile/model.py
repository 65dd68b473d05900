"""A profile: the samples of one run and what a report counts in them (US 7,823,129's tprof
report: samples per process, thread, module and function, with percentages).

A sample's frames run from the interrupted PC outwards (instrumenter/profiler/sampler.py); a
stack here runs from the root to the leaf, as folded stacks and flame graphs draw it. "Self"
counts the samples whose leaf is in a function (or module), "total" those with the function
anywhere on their stack, once per sample however deep the recursion.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

TRUNCATED = "[truncated]"      # the root of a stack whose unwind stopped early


@dataclass
class Profile:
    interval: int
    mode: str
    event: str = "insns"
    samples: list = field(default_factory=list)      # Sample records, in the order taken
    modules: list = field(default_factory=list)      # ModuleLoad records
    command: list[str] = field(default_factory=list)
    exit_code: int | None = None
    # (module, PC) -> lines.SourceLine of the samples' PCs, where the object has DWARF lines
    lines: dict = field(default_factory=dict)
    interrupts: int = 0                               # timer interrupts taken
    switches: int = 0                                 # thread switches (the first slice not counted)
    unloads: list = field(default_factory=list)       # ModuleUnload records
    walkup: dict | None = None                        # a recorded walk-up's report (walkup.json)

    def add_switch(self, switch) -> None:
        if switch.prev_tid:
            self.switches += 1

    def add_event(self, record) -> None:
        """An Interrupt, ThreadSwitch or ModuleUnload of the sampler."""
        kind = type(record).__name__
        if kind == "Interrupt":
            self.interrupts += 1
        elif kind == "ThreadSwitch":
            self.add_switch(record)
        elif kind == "ModuleUnload":
            self.unloads.append(record)

    def add(self, sample) -> None:
        self.samples.append(sample)

    def add_module(self, load) -> None:
        self.modules.append(load)

    @property
    def total(self) -> int:
        return len(self.samples)

    # ---- stacks ------------------------------------------------------------------------------
    @staticmethod
    def stack(sample) -> tuple[str, ...]:
        """Root-to-leaf frame names of `sample`; an unwind that stopped early starts with
        [truncated], so that no partial stack is drawn as if it began at the thread's start."""
        names = tuple(f.name for f in reversed(sample.frames))
        return ((TRUNCATED,) if sample.truncated else ()) + names

    def folded(self) -> Counter:
        """(comm, root, ..., leaf) -> samples: Brendan Gregg's stackcollapse lines."""
        return Counter((s.comm, *self.stack(s)) for s in self.samples)

    # ---- tprof's tables ----------------------------------------------------------------------
    def by_process(self) -> Counter:
        return Counter((s.pid, s.comm) for s in self.samples)

    def by_thread(self) -> Counter:
        return Counter((s.pid, s.tid, s.comm) for s in self.samples)

    def by_module(self) -> Counter:
        return Counter(s.frames[0].module for s in self.samples if s.frames)

    def self_by_function(self) -> Counter:
        return Counter((s.frames[0].module, s.frames[0].name) for s in self.samples if s.frames)

    def total_by_function(self) -> Counter:
        counts: Counter = Counter()
        for s in self.samples:
            counts.update({(f.module, f.name) for f in s.frames})
        return counts

    def self_by_line(self) -> Counter:
        """(source line, function, module) -> samples whose PC is on that line."""
        counts: Counter = Counter()
        for s in self.samples:
            if s.frames:
                leaf = s.frames[0]
                line = self.lines.get((leaf.module, leaf.address))
                if line is not None:
                    counts[(str(line), leaf.name, leaf.module)] += 1
        return counts

    def truncated(self) -> Counter:
        """Why unwinds stopped early, with how often."""
        return Counter(s.truncated for s in self.samples if s.truncated)


def ranked(counts: Counter) -> list[tuple]:
    """Largest first, ties in key order: the same profile always prints the same table."""
    return sorted(counts.items(), key=lambda item: (-item[1], str(item[0])))


def percent(part: int, whole: int) -> float:
    return 100.0 * part / whole if whole else 0.0
