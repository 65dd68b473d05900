"""The probe strategies, in one table: what each is, where its class lives, and `auto`'s order.

The CLI's choices, the session, `auto`, the loss experiment and the tests all read this table
(issue 15: the names were listed in four places). It is plain data, cheap to import: a
strategy's module is imported only when a session builds it.

Every strategy object is a ProbeStrategy (base.py): place, remove, refusal, fork, forget. The
entry says what a hit costs there (`hit_cost`, measured with bench/probe_rate.py on this
emulator) and where `auto` tries it (`auto_rank`, cheapest first, the lossy baseline last).

The registry is public (issue 29): a user's strategy class is named by `package.module:Class`
or by the name an installed package gives it in the entry-point group `trapline.strategies`
(`resolve`); a session builds it beside ours (`build(session, extra=...)`) and places, hits
and removes it like ours. `auto` tries ours only. A strategy that cannot be imported, that
does not implement the interface of base.py, or whose construction raises is a StrategyError:
one line naming the strategy and the cause.
"""
from __future__ import annotations

import importlib
from typing import NamedTuple

ENTRY_POINT_GROUP = "trapline.strategies"
# What a strategy must define itself (base.py's are placeholders that raise NotImplementedError).
INTERFACE = ("place", "remove", "check")


class Strategy(NamedTuple):
    name: str
    module: str
    cls: str
    options: tuple[tuple[str, str], ...]
    summary: str
    hit_cost: str = ""              # what one hit costs, measured (bench/probe_rate.py)
    auto_rank: int = 50             # auto's order: lower first; the lossy singlestep last


# In construction order: the jump strategy shares the trampoline strategy's XOL pages, so the
# trampoline one comes first.
REGISTRY: tuple[Strategy, ...] = (
    Strategy("trampoline", "instrumenter.strategies.trampoline", "TrampolineProbes", (),
             "int3; the handler sends the thread to a relocated copy in an XOL page (US 9,336,001)",
             "one trap, then the relocated instruction runs as guest code", 20),
    Strategy("emulate", "instrumenter.strategies.emulate.strategy", "EmulateProbes", (("form", "int3"),),
             "int3; the instruction is emulated on the trap frame (US 7,350,196); a system call "
             "is run by the kernel as the instruction would have run it",
             "one trap and the emulation (a trap frame, stores through the emulator)", 30),
    Strategy("emulate-lock", "instrumenter.strategies.emulate.strategy", "EmulateProbes", (("form", "lock"),),
             "a LOCK prefix makes #UD; the instruction is emulated (US 7,350,196)",
             "one #UD and the emulation (a trap frame, stores through the emulator)", 40),
    Strategy("singlestep", "instrumenter.strategies.singlestep", "SingleStepProbes", (),
             "the original is put back and single-stepped: loses hits in threads (the baseline)",
             "two traps and two code writes; loses hits in threads", 100),
    Strategy("singlestep-stopall", "instrumenter.strategies.singlestep_stopall",
             "StopAllSingleStepProbes", (),
             "singlestep with every other thread of the space held for the step (US 7,350,196 [0005])",
             "two traps and two code writes; every other thread held for the step", 90),
    Strategy("jump", "instrumenter.strategies.jump", "JumpProbes", (),
             "a 5-byte jmp to an out-of-line copy: no trap per hit (optimized kprobes)",
             "a few guest instructions (native count), one trap for a Python action", 10),
    Strategy("relocate", "instrumenter.strategies.relocate.strategy", "RelocateProbes", (),
             "an int3 at the function's entry sends it to an instrumented copy of the whole "
             "function; calls there push ORIGINAL return addresses (US 6,957,421)",
             "a trap per entry from original code, per call made in the copy and per return "
             "to it, one per Python action", 95),
)
NAMES: tuple[str, ...] = tuple(s.name for s in REGISTRY)
BY_NAME = {s.name: s for s in REGISTRY}

# What `auto` tries: every strategy of the registry, cheapest per hit first (bench/probe_rate.py,
# fib's entry on this emulator): a jump costs a few guest instructions, a trampoline hit one trap,
# an emulated one a trap and several times more (its trap frame is built and its stores go through
# the emulator's API, where a trampoline runs the instruction as guest code). emulate takes what
# the others refuse: a site with no XOL page within reach, a system call. singlestep comes last:
# it loses hits in threaded programs, so it is chosen only for a site nothing else takes (and -v,
# the listing and the records say so). relocate (US 6,957,421) takes a whole function and several
# traps per call made from its copy: auto tries it only where nothing cheaper and lossless would
# (in practice never: singlestep-stopall takes what it takes); it is for `--strategy relocate`.
AUTO_ORDER: tuple[str, ...] = tuple(s.name for s in sorted(REGISTRY, key=lambda s: s.auto_rank))
CHOICES: tuple[str, ...] = ("auto",) + NAMES


def is_user_strategy(name: str) -> bool:
    """Whether `name` is not one of ours nor `auto` (a class path or an entry-point name)."""
    return name not in CHOICES


def resolve(name: str) -> Strategy:
    """The registry entry for `name`: ours, `package.module:Class`, or an installed package's
    entry point in the group trapline.strategies. StrategyError for anything else."""
    from ..errors import StrategyError          # (not at import: `trapline run` reads NAMES only)
    if name in BY_NAME:
        return BY_NAME[name]
    if ":" in name:
        module, _, cls = name.partition(":")
        if not all(part.isidentifier() for part in (*module.split("."), cls)):
            raise StrategyError(f"strategy {name}: not package.module:Class")
        return Strategy(name, module, cls, (), f"{module}.{cls}", "a user's strategy", 1000)
    for entry in _entry_points():
        if entry.name == name:
            module, _, cls = entry.value.partition(":")
            return Strategy(name, module, cls, (), f"{entry.value} (entry point)",
                            "a user's strategy", 1000)
    raise StrategyError(f"strategy {name}: not one of {', '.join(CHOICES)}, not "
                        f"package.module:Class, and no installed package registers it "
                        f"(entry-point group {ENTRY_POINT_GROUP})")


def installed() -> tuple[Strategy, ...]:
    """The strategies installed packages register (entry-point group trapline.strategies)."""
    return tuple(resolve(entry.name) for entry in _entry_points())


def _entry_points():
    from importlib.metadata import entry_points
    return sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name)


def load(strategy: Strategy) -> type:
    """The class of `strategy`, imported and checked against the interface (StrategyError)."""
    from ..errors import StrategyError
    try:
        module = importlib.import_module(strategy.module)
    except Exception as e:          # noqa: BLE001 -- whatever the user's module raises
        raise StrategyError(f"strategy {strategy.name}: cannot import {strategy.module}: "
                            f"{type(e).__name__}: {e}") from None
    cls = getattr(module, strategy.cls, None)
    if not isinstance(cls, type):
        raise StrategyError(f"strategy {strategy.name}: {strategy.module} has no class "
                            f"{strategy.cls}")
    from .base import ProbeStrategy
    missing = [m for m in INTERFACE if not callable(getattr(cls, m, None))
               or getattr(cls, m) is getattr(ProbeStrategy, m)]
    if missing:
        raise StrategyError(f"strategy {strategy.name}: {cls.__name__} does not implement the "
                            f"strategy interface (instrumenter/strategies/base.py): no "
                            f"{', '.join(missing)}")
    return cls


def build(session, extra: tuple[str, ...] = ()) -> dict[str, object]:
    """Every strategy of the registry for `session`, by name, built in registry order (each
    may use the ones before it through the session: `session.trampolines`), then the user's
    strategies named in `extra` (resolve)."""
    built: dict[str, object] = {}
    for strategy in REGISTRY:
        cls = getattr(importlib.import_module(strategy.module), strategy.cls)
        built[strategy.name] = cls(session, **dict(strategy.options))
        if strategy.name == "trampoline":
            session.trampolines = built["trampoline"]
    for name in extra:
        built[name] = construct(resolve(name), session)
    return built


def construct(strategy: Strategy, session):
    """A user's strategy object for `session` (StrategyError when its constructor raises)."""
    from ..errors import StrategyError
    cls = load(strategy)
    try:
        return cls(session, **dict(strategy.options))
    except Exception as e:          # noqa: BLE001 -- whatever the user's constructor raises
        raise StrategyError(f"strategy {strategy.name}: {cls.__name__}(session) raised "
                            f"{type(e).__name__}: {e}") from None
