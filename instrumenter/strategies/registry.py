"""The probe strategies, in one table: what each is, where its class lives, and `auto`'s order.

The CLI's choices, the session, `auto`, the loss experiment and the tests all read this table
(issue 15: the names were listed in four places). It is plain data, cheap to import: a
strategy's module is imported only when a session builds it.

Every strategy object has the same interface: `place(process, address, hook, owner) -> site`
(raising InstrumenterError, e.g. RelocationRefused, with a one-line reason when it cannot take
the instruction there), and it follows the process events it subscribes to on the debug
interface (fork, exec, exit, space released).
"""
from __future__ import annotations

import importlib
from typing import NamedTuple


class Strategy(NamedTuple):
    name: str
    module: str
    cls: str
    options: tuple[tuple[str, str], ...]
    summary: str


# In construction order: the jump strategy shares the trampoline strategy's XOL pages, so the
# trampoline one comes first.
REGISTRY: tuple[Strategy, ...] = (
    Strategy("trampoline", "instrumenter.strategies.trampoline", "TrampolineProbes", (),
             "int3; the handler sends the thread to a relocated copy in an XOL page (seed 000)"),
    Strategy("emulate", "instrumenter.strategies.emulate", "EmulateProbes", (("form", "int3"),),
             "int3; the instruction is emulated on the trap frame (seed 001)"),
    Strategy("emulate-lock", "instrumenter.strategies.emulate", "EmulateProbes", (("form", "lock"),),
             "a LOCK prefix makes #UD; the instruction is emulated (seed 001)"),
    Strategy("singlestep", "instrumenter.strategies.singlestep", "SingleStepProbes", (),
             "the original is put back and single-stepped: loses hits in threads (the baseline)"),
    Strategy("jump", "instrumenter.strategies.jump", "JumpProbes", (),
             "a 5-byte jmp to an out-of-line copy: no trap per hit (optimized kprobes)"),
)
NAMES: tuple[str, ...] = tuple(s.name for s in REGISTRY)
BY_NAME = {s.name: s for s in REGISTRY}

# What `auto` tries, cheapest per hit first (bench/probe_rate.py, fib's entry on this emulator):
# a jump costs a few guest instructions, a trampoline hit ~1.5 µs, an emulated one ~10 µs (its
# trap frame is built and its stores go through the emulator's API, where a trampoline runs
# the instruction as guest code). emulate takes what the others refuse, e.g. a site with no
# XOL page within reach. Never singlestep: it loses hits in threaded programs, so only a user
# asks for it.
AUTO_ORDER: tuple[str, ...] = ("jump", "trampoline", "emulate")
CHOICES: tuple[str, ...] = ("auto",) + NAMES


def build(session) -> dict[str, object]:
    """Every strategy of the registry for `session`, by name, built in registry order (each
    may use the ones before it through the session: `session.trampolines`)."""
    built: dict[str, object] = {}
    for strategy in REGISTRY:
        cls = getattr(importlib.import_module(strategy.module), strategy.cls)
        built[strategy.name] = cls(session, **dict(strategy.options))
        if strategy.name == "trampoline":
            session.trampolines = built["trampoline"]
    return built
