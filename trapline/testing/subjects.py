"""What `trapline check` checks: a strategy, by name (ours), `package.module:Class` or an
installed package's entry point (instrumenter/strategies/registry.py), or a bare relocator.

A subject has a `relocator` (the single-instruction relocation property runs on it) when its
class carries one (`relocator`, as TrampolineProbes does), and `placings` (the probed-sequence
property places it on the stand-in kernel of probes.py) when it is a class: ours that run
there are the trampoline and jump strategies (the others need the modeled kernel: their
properties are tests/property/test_emulate_properties.py and the detach and fork ones).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .probes import Placing, builtin_placing

# Our strategies the stand-in kernel runs, with the variants the project's property checks.
BUILTIN_PLACINGS = {"trampoline": ("trampoline",),
                    "jump": ("jump", "jump+count", "jump+count-inside")}
DEFAULT = ("trampoline", "jump")


@dataclass(frozen=True)
class Subject:
    name: str
    relocator: object = None                         # relocate(insn, address, arch, **opts)
    placings: dict[str, Placing] = field(default_factory=dict)    # variant name -> Placing
    # the name a tracing Session places it by (ours, package.module:Class, an entry point):
    # the whole-program properties run it there (process_properties.py); None: a bare relocator
    session_name: str | None = None


def subject(name: str) -> Subject:
    """The subject for a strategy name (StrategyError for a bad one: one line)."""
    from instrumenter.strategies import registry
    entry = registry.resolve(name)
    if name in registry.BY_NAME:
        import importlib
        cls = getattr(importlib.import_module(entry.module), entry.cls)
        placings = {v: builtin_placing(v) for v in BUILTIN_PLACINGS.get(name, ())}
    else:
        cls = registry.load(entry)
        placings = {name: Placing(lambda session, cls=cls: _construct(cls, session, name))}
    return Subject(name, getattr(cls, "relocator", None), placings, name)


def relocator_subject(name: str, relocator) -> Subject:
    """A bare relocator (the self-test's planted copies)."""
    return Subject(name, relocator, {})


def default_names() -> list[str]:
    """Ours that the battery runs, and every strategy an installed package registers."""
    from instrumenter.strategies import registry
    return [*DEFAULT, *(s.name for s in registry.installed())]


def _construct(cls, session, name: str):
    from instrumenter.errors import StrategyError
    try:
        return cls(session)
    except Exception as e:          # noqa: BLE001 -- whatever the user's constructor raises
        raise StrategyError(f"strategy {name}: {cls.__name__}(session) raised "
                            f"{type(e).__name__}: {e}") from None
