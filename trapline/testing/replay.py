"""One printed example run again: `trapline check --replay CASE`.

A report's case is plain data whose repr is Python (`RelocationCase(...)`, `ProbedCase(...)`,
`TreeCase(...)`, `ThreadsCase(...)`, `DetachCase(...)`, with a `Layout(...)` inside): the text
after `@example(case=` in the reproducer. Replayed, it is that exact case, not hypothesis's
draw: a seed reproduces a run only while the generators draw the same way (a change anywhere
in trapline.testing's strategies shrinks to another layout), the case itself always does.

The text is evaluated with nothing but those classes and `bytes` in scope (no builtins): it
is data, written by `trapline check`; a user pastes it from a report.
"""
from __future__ import annotations

from hypothesis import strategies as st

from .detaching import DetachCase
from .layouts import Layout
from .oracles import RelocationCase
from .probes import ProbedCase
from .threads import ThreadsCase
from .trees import TreeCase

CASE_TYPES = (RelocationCase, ProbedCase, TreeCase, ThreadsCase, DetachCase)
_SCOPE = {"__builtins__": {}, "bytes": bytes, "Layout": Layout,
          **{cls.__name__: cls for cls in CASE_TYPES}}


def parse_case(text: str):
    """The case `text` (a case's repr) builds; ValueError in one line when it builds none."""
    try:
        case = eval(text, dict(_SCOPE))          # noqa: S307 -- data in a fixed, builtin-free scope
    except Exception as e:                       # noqa: BLE001 -- any mistake in pasted text
        raise ValueError(f"not a case: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
                         .rstrip(": ")) from None
    if not isinstance(case, CASE_TYPES):
        raise ValueError(f"not a case: a {type(case).__name__} (expected one of "
                         f"{', '.join(c.__name__ for c in CASE_TYPES)})")
    return case


def case_arch(case) -> str:
    return case.layout.arch if hasattr(case, "layout") else case.arch


def replayed(properties: list, case) -> list:
    """The properties that take `case`, each planned to run exactly it once."""
    from .battery import Case
    return [type(p)(p.name, [Case("replay", st.just(case), 1)], p.body, p.case_type)
            for p in properties if isinstance(case, p.case_type)]
