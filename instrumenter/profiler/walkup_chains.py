"""The report's questions to a finished walk-up (walkup.py): each hot spot's chain of levels,
followed into the walks it joined, where that chain ended (its tops) and where and why it stopped.

Kept apart from walkup.py, which mixes it into WalkUp, because reading the walk's result is one
concept and taking its steps during the run another; trapline/profile/walkup_report.py and the
tests call these as WalkUp's methods still.
"""
from __future__ import annotations

from .callers import FunctionId, Stop


class WalkUpChains:
    def ends_of(self, hot_spot: FunctionId) -> list[tuple[int, object, Stop]]:
        """(level, entry, stop): where and why `hot_spot`'s chain stopped, its own levels and
        those of the walks it went on in (full_chain)."""
        return [(level, entry, stop) for level, entry in self.full_chain(hot_spot) for stop in entry.stops]

    def chains(self) -> dict[FunctionId, list]:
        """Hot spot -> the caller-list entries its walk instrumented or reached, by level."""
        chains: dict[FunctionId, list] = {}
        for entry in self.callers:
            if entry.hot_spot is not None:
                chains.setdefault(entry.hot_spot, []).append(entry)
        return {spot: sorted(entries, key=lambda e: e.level) for spot, entries in chains.items()}

    def tops_of(self, hot_spot: FunctionId) -> list[FunctionId]:
        """Where `hot_spot`'s chain ended: its own tops and those of the walks it went on in."""
        tops, pending, seen = [], [hot_spot], set()
        while pending:
            spot = pending.pop(0)
            if spot in seen:
                continue
            seen.add(spot)
            tops += [f for f in self.tops.get(spot, []) if f not in tops]
            pending += [self.callers.entries[f].hot_spot for f, _ in self.join_points.get(spot, [])]
        return tops

    def full_chain(self, hot_spot: FunctionId) -> list[tuple[int, object]]:
        """(level, entry) from `hot_spot` up to the top, following the walks it met: a walk that
        reaches a function another walk has stops there (`_join`), but its chain goes on in the
        other walk's levels from that function, renumbered from this hot spot."""
        chains = self.chains()
        levels = [(e.level, e) for e in chains.get(hot_spot, [])]
        have = {e.function for _, e in levels}
        pending, seen = list(self.join_points.get(hot_spot, [])), {hot_spot}
        while pending:
            function, level = pending.pop(0)
            other = self.callers.entries[function]
            if other.hot_spot is None or other.hot_spot in seen:
                continue
            seen.add(other.hot_spot)
            pending += [(f, level + n - other.level) for f, n in self.join_points.get(other.hot_spot, [])]
            for entry in chains.get(other.hot_spot, []):
                if entry.level >= other.level and entry.function not in have:
                    have.add(entry.function)
                    levels.append((level + entry.level - other.level, entry))
        return sorted(levels, key=lambda pair: pair[0])
