"""A profile: the samples of one run and what a report counts in them (US 7,823,129's tprof
report: samples per process, thread, module and function, with percentages).

A sample's frames run from the interrupted PC outwards (instrumenter/profiler/sampler.py); a
stack here runs from the root to the leaf, as folded stacks and flame graphs draw it. "Self"
counts the samples whose leaf is in a function (or module), "total" those with the function
anywhere on their stack, once per sample however deep the recursion.

A profile of PC mode whose samples nobody needs one by one (no --record, no file with each
sample's time: session.py) holds tallies for the ticks the timer's C handler took: (sample, n),
n ticks of one thread at the sample's PC between two hand-overs of its histogram, the sample's
`ts` the first's (the ticks it left to the kernel are samples still). Every count below takes a
tally as its n samples, so the report is the same either way.
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
    tallies: list = field(default_factory=list)      # (Sample, ticks it stands for), see above
    tallied: int = 0                                  # the ticks of `tallies`
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

    def add_tally(self, sample, n: int) -> None:
        """`n` ticks at `sample`'s PC: n samples, and n timer interrupts (which the tally's
        ticks do not report one by one)."""
        self.tallies.append((sample, n))
        self.tallied += n
        self.interrupts += n

    def in_time_order(self) -> list:
        """The samples, and a tally's sample once, in the order of their (first) ticks."""
        if not self.tallies:
            return self.samples
        return sorted([*self.samples, *(sample for sample, _ in self.tallies)], key=_ts)

    def add_module(self, load) -> None:
        self.modules.append(load)

    @property
    def total(self) -> int:
        return len(self.samples) + self.tallied

    def _count(self, key) -> Counter:
        """key(sample) -> samples, a tally's sample counted as its ticks (key None: not counted)."""
        counts = Counter(map(key, self.samples))
        for sample, n in self.tallies:
            counts[key(sample)] += n
        counts.pop(None, None)
        return counts

    # ---- stacks ------------------------------------------------------------------------------
    @staticmethod
    def stack(sample) -> tuple[str, ...]:
        """Root-to-leaf frame names of `sample`; an unwind that stopped early starts with
        [truncated], so that no partial stack is drawn as if it began at the thread's start."""
        names = tuple(f.name for f in reversed(sample.frames))
        return ((TRUNCATED,) if sample.truncated else ()) + names

    def folded(self) -> Counter:
        """(comm, root, ..., leaf) -> samples: Brendan Gregg's stackcollapse lines."""
        return self._count(lambda s: (s.comm, *self.stack(s)))

    # ---- tprof's tables ----------------------------------------------------------------------
    def by_process(self) -> Counter:
        return self._count(lambda s: (s.pid, s.comm))

    def by_thread(self) -> Counter:
        return self._count(lambda s: (s.pid, s.tid, s.comm))

    def by_module(self) -> Counter:
        return self._count(lambda s: s.frames[0].module if s.frames else None)

    def self_by_function(self) -> Counter:
        return self._count(lambda s: (s.frames[0].module, s.frames[0].name) if s.frames else None)

    def total_by_function(self) -> Counter:
        counts: Counter = Counter()
        for s in self.samples:
            counts.update({(f.module, f.name) for f in s.frames})
        for s, n in self.tallies:
            for function in {(f.module, f.name) for f in s.frames}:
                counts[function] += n
        return counts

    def self_by_line(self) -> Counter:
        """(source line, function, module) -> samples whose PC is on that line."""
        def line_of(s):
            if s.frames:
                leaf = s.frames[0]
                line = self.lines.get((leaf.module, leaf.address))
                if line is not None:
                    return str(line), leaf.name, leaf.module
            return None
        return self._count(line_of)

    def truncated(self) -> Counter:
        """Why unwinds stopped early, with how often."""
        return self._count(lambda s: s.truncated or None)


def _ts(sample) -> int:
    return sample.ts


def ranked(counts: Counter) -> list[tuple]:
    """Largest first, ties in key order: the same profile always prints the same table."""
    return sorted(counts.items(), key=lambda item: (-item[1], str(item[0])))


def percent(part: int, whole: int) -> float:
    return 100.0 * part / whole if whole else 0.0
