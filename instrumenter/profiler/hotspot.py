"""Hot-spot decision (US 7,823,129 [0166]): after a sampling window, a function whose share of the
window's samples reaches the threshold is a hot spot; "if there are no functions that reach the
desired percentages then some predetermined number of functions that have the highest counts"
are. The decision is taken again for every window (a program's phases change what is hot), and
a function decided once stays decided.

A sample counts for the function its PC is in (tprof's "self" tick): its symbol's, or in
stripped code its FDE's (walkup.py); a PC neither covers (tool pages, JIT code) cannot be
hooked and is not a candidate.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from .callers import FunctionId


@dataclass(frozen=True)
class HotSpot:
    function: FunctionId
    window: int                 # which window decided it (1 = the first)
    samples: int                # its samples in that window
    share: float                # percent of the window's samples
    by: str                     # "threshold" or "top"


@dataclass
class HotSpotDetector:
    threshold: float            # percent of a window's samples
    top: int                    # how many when none reaches the threshold
    window: int                 # samples per window
    exclude: frozenset = frozenset()        # names never hot (the runtime's start code)
    decided: dict = field(default_factory=dict)      # FunctionId -> HotSpot, in decision order
    windows: int = 0
    _counts: Counter = field(default_factory=Counter)
    _seen: int = 0

    def __post_init__(self):
        if self.window <= 0:
            raise ValueError("the sampling window must be at least one sample")
        if not 0 < self.threshold <= 100:
            raise ValueError(f"threshold {self.threshold}%: expected a percentage in (0, 100]")
        if self.top <= 0:
            raise ValueError("top must be at least 1")

    def add(self, function: FunctionId | None) -> list[HotSpot]:
        """One sample in `function` (None: no symbol); returns the hot spots decided when it
        closes a window (empty otherwise)."""
        self._seen += 1
        if function is not None and function.name not in self.exclude:
            self._counts[function] += 1
        if self._seen < self.window:
            return []
        return self.close_window()

    def close_window(self) -> list[HotSpot]:
        """Decide on the samples since the last window (also the partial one at the end)."""
        counts, seen = self._counts, self._seen
        self._counts, self._seen = Counter(), 0
        if not seen:
            return []
        self.windows += 1
        ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0].name, item[0].entry))
        hot = [(f, n, "threshold") for f, n in ranked if 100.0 * n / seen >= self.threshold]
        if not hot:
            hot = [(f, n, "top") for f, n in ranked[:self.top]]
        new = []
        for function, n, by in hot:
            if function not in self.decided:
                spot = self.decided[function] = HotSpot(function, self.windows, n, 100.0 * n / seen, by)
                new.append(spot)
        return new
