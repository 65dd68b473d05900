"""A session's strategies by name, each built at its first use (issue 31).

Building every strategy up front imported them all, and what they import (capstone, keystone,
pyelftools: bench/trace_cost.py measures it) for every `trapline trace`, also one whose probes are system calls
or process events only and place nothing. A strategy is built when the session first names it:
`auto` tries them cheapest first and stops at the first that takes a site, so a trace whose
uprobes all take a jump builds the jump strategy and the trampoline one whose XOL pages it
shares (jump.py), and nothing else.

A strategy that was never built has placed nothing and holds no table, so what walks the
strategies of a run (a fork's copies, detach) walks `built()`. Iterating the mapping itself
names every strategy and its values build them all (the debugger's address map, the tests of
the interface). A user's strategy is built at once, so that one that cannot be imported or
built is a StrategyError before the run starts (registry.py).
"""
from __future__ import annotations

import importlib
from collections.abc import Mapping

from .registry import REGISTRY, construct, resolve


class StrategyTable(Mapping):
    def __init__(self, session, extra: tuple[str, ...] = ()):
        self._session = session
        self._entries = {strategy.name: strategy for strategy in REGISTRY}
        self._built: dict[str, object] = {}
        for name in extra:
            self._entries[name] = entry = resolve(name)
            self._built[name] = construct(entry, session)

    def __getitem__(self, name: str):
        strategy = self._built.get(name)
        if strategy is None:
            entry = self._entries[name]                     # KeyError: no such strategy
            cls = getattr(importlib.import_module(entry.module), entry.cls)
            strategy = self._built[name] = cls(self._session, **dict(entry.options))
        return strategy

    def __iter__(self):
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def built(self) -> list:
        """The strategies built so far, in the order they were."""
        return list(self._built.values())

    def if_built(self, name: str):
        """The strategy `name` if it was built, else None (without building it)."""
        return self._built.get(name)
