"""Exclusive timing for the walk-up (walkup.py, --exclusive exact): while a level is measured,
the callees the walk knows keep an entry/exit pair timing them (hooks.py, kind "time"), so its
exclusive metric is its inclusive less its timed callees' over the same calls; they are untimed
once the level is taken out and none of its measured activations is open.

Kept apart from walkup.py, which mixes it into WalkUp, because timing callees is one concept
(off by default: the walk-up of US 7,823,129 places no such hooks) and walking up another.
"""
from __future__ import annotations

from .callers import IDENTIFYING, MEASURING


class ExclusiveTiming:
    def _callees_to_time(self, entry) -> tuple:
        """The callees a measured level's exclusive metric excludes, each timed while it is
        measured: none without --exclusive exact."""
        if self.options.exclusive != "exact":
            return ()
        return tuple(f for f in entry.callees if f != entry.function)

    def _start_timing(self, process, entry) -> None:
        """At a measured function's first measured call, before its body runs: the callees
        not hooked yet are hooked to time them (a level never entered again, such as a main
        under start code other than glibc's, places none)."""
        for callee in entry.timed:
            if callee not in self._timing[entry.function]:
                self._time(process, entry, self.callers.entry(callee))
        self._timing[entry.function].append(None)      # started

    def _time(self, process, caller, callee) -> None:
        """Keep `callee` hooked while `caller` is measured (hooks.py, kind "time")."""
        self._timing[caller.function].append(callee.function)
        callee.timers += 1
        if callee.timers == 1 and callee.state not in (IDENTIFYING, MEASURING):
            if not self.hooks.hooked(callee):
                holder = self._process_holding(callee.function, process)
                if holder is None:
                    callee.timers -= 1
                    self._timing[caller.function].remove(callee.function)
                    return
                self.hooks.insert(holder, callee, "time")
            self._step("insert", "time", callee)

    def _untime(self, callee) -> None:
        callee.timers -= 1
        if callee.timers == 0 and callee.state not in (IDENTIFYING, MEASURING):
            self.hooks.remove(callee)
            self._step("remove", "time", callee)

    def _release_timed(self) -> None:
        """Untime the callees of the levels taken out once none of their measured activations
        is open: the last one (the period is reached at its entry with --metric calls) calls
        them still, and its exclusive metric must exclude them too."""
        if not self._untimed:
            return
        open_now = {id(o.entry) for o in self.activations.still_open()}
        for entry in [e for e in self._untimed if id(e) not in open_now]:
            self._untimed.remove(entry)
            for callee in self._timing.pop(entry.function, ()):
                if callee is not None:
                    self._untime(self.callers.entry(callee))
