"""The caller list of the walk-up (US 7,823,129 [0204]-[0214]): for every function the walk-up has
met, whether it is instrumented now, how many times its hooks have run since it was, the
functions it calls and the functions that call it (learned from the return addresses its entry
hooks saw), and what its hooks measured.

Plain data, no door: the walk-up (walkup.py) fills it, the report reads it. Functions are keyed
by their entry address and the object they are in (`FunctionId`); every table keeps insertion
order, which the deterministic run makes the same every time.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

IDLE, IDENTIFYING, MEASURING, DONE = "idle", "identifying", "measuring", "done"


class FunctionId(NamedTuple):
    module: str          # the object's file name ("callchain", "libc.so.6")
    name: str            # its symbol
    entry: int           # its first instruction's address in the process


@dataclass
class Metric:
    """Sums over the activations that returned (open ones are counted apart)."""
    invocations: int = 0            # entries seen by the entry hook
    returns: int = 0                # exits seen through the return landing
    abandoned: int = 0              # activations a longjmp (or thread exit) skipped
    insns_inclusive: int = 0        # guest instructions from entry to exit, outermost activations
    insns_exclusive: int | None = 0     # each activation's own: inclusive less its timed callees';
                                        # None: not measured (the walk-up's --exclusive off)
    time_inclusive: int = 0         # virtual nanoseconds, the same way
    time_exclusive: int | None = 0

    def value(self, metric: str, kind: str = "inclusive") -> int:
        if metric == "calls":
            return self.invocations
        return getattr(self, f"{metric}_{kind}")


class Stop(NamedTuple):
    """Why the walk went no further up from a function (one of its reasons)."""
    reason: str          # a code: see walkup.py STOP_REASONS
    why: str             # the sentence the report prints


@dataclass
class CallerEntry:
    function: FunctionId
    state: str = IDLE
    level: int = 0                  # 0: the hot spot itself; n: n calls above it
    hot_spot: FunctionId | None = None     # the walk it was reached by (the first one)
    hook_runs: int = 0              # entry and exit hooks run since it was instrumented
    metric: Metric = field(default_factory=Metric)
    callers: dict = field(default_factory=dict)     # FunctionId -> calls seen from it
    callees: dict = field(default_factory=dict)     # FunctionId -> calls it was seen making
    uncertain: dict = field(default_factory=dict)   # FunctionId -> why the caller is a guess
    unnamed: dict = field(default_factory=dict)     # "module+0xoff" -> calls from code no
                                                    # symbol nor FDE bounds: unhookable
    outside: dict = field(default_factory=dict)     # FunctionId -> recursive calls whose first
                                                    # caller outside the recursion it was
    recursion: dict = field(default_factory=dict)   # why -> recursive calls whose outside caller
                                                    # the stack did not give
    stops: list = field(default_factory=list)       # [Stop]: why the walk ended here
    went_on: int = 0                # callers its walk-up instrumented, merged into or joined
    timed: tuple = ()               # the callees whose time its exclusive metric excludes
    timers: int = 0                 # measured callers timing it now (its probe stays in)
    instrumented_at: int | None = None      # virtual time (guest instructions) of each step
    removed_at: int | None = None


class CallerList:
    def __init__(self, *, exclusive: bool = True):
        """`exclusive`: its entries' metrics have an exclusive sum; without, their exclusive
        fields are None — no figure rather than one that subtracts only some callees."""
        self.entries: dict[FunctionId, CallerEntry] = {}
        self.exclusive = exclusive

    def entry(self, function: FunctionId) -> CallerEntry:
        found = self.entries.get(function)
        if found is None:
            metric = Metric() if self.exclusive else Metric(insns_exclusive=None, time_exclusive=None)
            found = self.entries[function] = CallerEntry(function, metric=metric)
        return found

    def __contains__(self, function: FunctionId) -> bool:
        return function in self.entries

    def __iter__(self):
        return iter(self.entries.values())

    def saw_call(self, caller: FunctionId, callee: FunctionId, why_uncertain: str | None = None) -> None:
        """A hook of `callee` found `caller` at its return address: both sides learn it."""
        callee_entry, caller_entry = self.entry(callee), self.entry(caller)
        callee_entry.callers[caller] = callee_entry.callers.get(caller, 0) + 1
        caller_entry.callees[callee] = caller_entry.callees.get(callee, 0) + 1
        if why_uncertain is not None:
            callee_entry.uncertain.setdefault(caller, why_uncertain)

    def callers_of(self, function: FunctionId) -> list[FunctionId]:
        """Known callers of `function`, most calls first (ties: first seen first)."""
        callers = self.entry(function).callers
        order = {f: i for i, f in enumerate(callers)}
        return sorted(callers, key=lambda f: (-callers[f], order[f]))

    def instrumented(self) -> list[CallerEntry]:
        return [e for e in self.entries.values() if e.state in (IDENTIFYING, MEASURING)]

    def timing(self) -> list[CallerEntry]:
        """Functions hooked only to time them for a measured caller's exclusive metric."""
        return [e for e in self.entries.values() if e.timers and e.state not in (IDENTIFYING, MEASURING)]

    def saw_outside(self, caller: FunctionId, callee: FunctionId) -> None:
        """A recursive call of `callee` whose first frame outside the recursion is `caller`."""
        entry = self.entry(callee)
        entry.outside[caller] = entry.outside.get(caller, 0) + 1
        self.entry(caller)

    def walk_callers(self, function: FunctionId) -> list[FunctionId]:
        """The callers the walk goes up to: the known callers other than the function itself,
        then the callers outside its recursion, most calls first."""
        entry = self.entry(function)
        merged = {f: n for f, n in entry.callers.items() if f != function}
        for f, n in entry.outside.items():
            merged[f] = merged.get(f, 0) + n
        order = {f: i for i, f in enumerate(merged)}
        return sorted(merged, key=lambda f: (-merged[f], order[f]))
