"""The battery's whole-program properties (issue 29's "anyone's strategy, checked"): process
trees with fork/vfork/exec (trees.py), threads at small quanta (threads.py), removal and
detach at any point (detaching.py). Each runs a shipped sample on the modeled kernel under the
strategy, through a tracing Session exactly as `trapline trace --strategy S` places it, and
compares it with the unprobed run.

A property here is (title, cases for an arch, the difference function, the case's lines for
a report); `guest_body` turns one into the battery's body: passed, refused (the strategy's
InstrumenterError, by reason), skipped, or a Counterexample with the case and its first
difference.
"""
from __future__ import annotations

from typing import NamedTuple

from . import detaching, threads, trees
from .guests import Broken, Refused, Skipped
from .verdicts import Counterexample, reason


class GuestProperty(NamedTuple):
    title: str
    cases: object             # arch -> hypothesis strategy of cases
    difference: object        # (case, strategy name) -> str | None
    describe: object          # case -> report lines
    case_type: type           # what one example is


GUEST_PROPERTIES = (
    GuestProperty("process tree (fork/vfork/exec)", trees.tree_cases, trees.tree_difference,
                  trees.describe, trees.TreeCase),
    GuestProperty("threads at small quanta", threads.threads_cases, threads.threads_difference,
                  threads.describe, threads.ThreadsCase),
    GuestProperty("removal and detach", detaching.detach_cases, detaching.detach_difference,
                  detaching.describe, detaching.DetachCase),
)


def guest_body(prop: GuestProperty, strategy: str):
    def body(case):
        try:
            diff = prop.difference(case, strategy)
        except Refused as refused:
            return "refused", reason(str(refused))
        except Skipped as skipped:
            return "skipped", str(skipped)
        except Broken as broken:
            diff = f"the strategy raised: {broken}"
        if diff is not None:
            raise Counterexample([f"{prop.title} with {strategy}: {diff}", *prop.describe(case),
                                  f"  first difference: {diff}"])
        return "passed", ""
    return body
