"""The properties, run outside pytest: counts per property (examples run, accepted, refused by
reason, skipped, failed), hypothesis's shrunk counterexample on a failure, and a reproducer.

Each property is a list of hypothesis runs ("cases": a class at a placement, or one form),
each of `examples` examples from `seed` (no example database: the same seed gives the same
examples and the same report). A failure stops its property; the last failing example
hypothesis runs is its shrunk, minimal one, which the report describes.
"""
from __future__ import annotations

import signal
from collections import Counter
from dataclasses import dataclass, field

from hypothesis import HealthCheck, Verbosity, given, settings
from hypothesis import seed as with_seed
from hypothesis.errors import FailedHealthCheck, Unsatisfiable

from instrumenter.errors import InstrumenterError
from instrumenter.insn.policy import forms_of

from .cases import relocation_cases
from .instructions import class_names, classes_of
from .layouts import PLACEMENTS
from .listing import listing
from .oracles import RelocationCase, check_relocation
from .process_properties import GUEST_PROPERTIES, guest_body
from .probes import ProbedCase, scenarios, sequence_difference, unjudgeable
from .subjects import Subject
from .verdicts import Counterexample, reason as _reason


@dataclass
class Tally:
    prop: str
    subject: str
    arch: str
    run: int = 0
    accepted: int = 0
    refused: Counter = field(default_factory=Counter)
    skipped: int = 0
    caught_at: int | None = None      # examples run when the first failure appeared
    caught_in: str = ""               # the case it appeared in, and that case's example number
    failure: list[str] | None = None  # the shrunk counterexample's report
    error: str | None = None          # the property could not run (one line)

    @property
    def failed(self) -> int:
        return 1 if self.failure else 0


@dataclass
class Case:
    """One hypothesis run of a property: `cases` strategy, `examples`, and how to name it."""
    label: str
    cases: object
    examples: int
    classes: str = ""


class _Hung(BaseException):
    """An example ran past the time limit (a BaseException: hypothesis does not catch it, so
    a hang is reported at once, never shrunk one time limit per step)."""


def run_cases(tally: Tally, cases: list[Case], body, *, seed: int, on_example=None,
              reproduce=None, time_limit: float | None = None) -> Tally:
    """Run `body(example) -> (status, reason)` over each case until the first failure; an
    example still running after `time_limit` seconds (a strategy that hangs) fails its
    property with a report."""
    if time_limit is not None:
        body = _limited(body, time_limit)
    for case in cases:
        failing: list = []
        first = tally.run

        @settings(max_examples=case.examples, database=None, deadline=None, derandomize=False,
                  verbosity=Verbosity.quiet, report_multiple_bugs=False,
                  suppress_health_check=list(HealthCheck))
        @with_seed(seed)
        @given(example=case.cases)
        def prop(example):
            if failing:                   # shrinking: not counted as examples run
                return _judged(body, example, failing, tally, counted=False)
            tally.run += 1
            if on_example is not None:
                on_example()
            _judged(body, example, failing, tally, counted=True)
        try:
            prop()
        except Counterexample as found:
            tally.caught_in = f"{case.label}: example {tally.caught_at - first} of {case.examples}"
            lines = list(found.lines)
            if reproduce is not None:
                lines += reproduce(case, failing[-1])
            tally.failure = lines
            return tally
        except _Hung as hung:
            tally.failure = [f"{case.label}: example {tally.run - first} still running after "
                             f"{time_limit:g} s (a hang; not shrunk)", f"  example: {hung.args[0]!r}"]
            if reproduce is not None:
                tally.failure += reproduce(case, hung.args[0])
            return tally
        except (Unsatisfiable, FailedHealthCheck) as e:
            tally.error = f"{case.label}: {type(e).__name__}: {str(e).splitlines()[0]}"
            return tally
    return tally


def _limited(body, seconds: float):
    """`body` under a wall-clock limit (SIGALRM: the check runs in the main thread)."""
    def limited(example):
        def expire(signum, frame):
            raise _Hung(example)
        previous = signal.signal(signal.SIGALRM, expire)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            return body(example)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    return limited


def _judged(body, example, failing: list, tally: Tally, *, counted: bool):
    try:
        status, reason = body(example)
    except Counterexample:
        if not failing:
            tally.caught_at = tally.run
        failing.append(example)
        raise
    if not counted:
        return
    if status == "passed":
        tally.accepted += 1
    elif status == "refused":
        tally.refused[reason] += 1            # counted, by reason, in the table: never hidden
    else:
        tally.skipped += 1


# ---- single-instruction relocation ------------------------------------------------------
def relocation_plan(arch: str, examples: int, classes: list[str] | None = None) -> list[Case]:
    """A case per (class, placement) with `examples`, and one per form with a sixth of it (at
    least 3), so that every form of the policy tables runs: the project's own property."""
    names = class_names()
    chosen = [names[c] for c in classes] if classes else classes_of(arch)
    chosen = [c for c in chosen if forms_of(c, arch)]
    plan = [Case(f"{c.value} {p}", relocation_cases(arch, p, [c.value]), examples, c.value)
            for c in chosen for p in PLACEMENTS[arch]]
    per_form = max(3, examples // 6)
    plan += [Case(f"{c.value} {p} `{f.text}`", relocation_cases(arch, p, [c.value], f), per_form,
                  c.value)
             for c in chosen for p in PLACEMENTS[arch] for f in forms_of(c, arch)]
    return plan


def host_plan(arch: str, examples: int, classes: list[str] | None = None) -> list[Case]:
    """The host oracle's cases: one per class and placement, a third of `examples` (at least
    3) each — two host processes per example make it the slowest property."""
    return [Case(c.label, c.cases, max(3, examples // 3), c.classes)
            for c in relocation_plan(arch, examples, classes) if "`" not in c.label]


def relocation_body(subject: Subject, oracle=check_relocation):
    def body(case: RelocationCase):
        try:
            verdict = oracle(case, subject.relocator)
        except Exception as e:        # noqa: BLE001 -- the relocator's own bug
            raise Counterexample(_relocation_lines(subject, case, None,
                                                    f"the relocator raised {type(e).__name__}: {e}"))
        if verdict.status == "failed":
            raise Counterexample(_relocation_lines(subject, case, verdict.relocated,
                                                    str(verdict.difference)))
        return verdict.status, _reason(verdict.reason)
    return body


def _relocation_lines(subject: Subject, case: RelocationCase, relocated, difference: str):
    insn, layout = case.insn, case.layout
    lines = [f"relocation of `{insn.mnemonic} {insn.op_str}`".rstrip() +
             f" [{insn.raw.hex(' ')}] ({case.cls}, {case.placement}) by {subject.name}: "
             f"{difference}",
             f"  layout: original at {layout.orig:#x}, copy at {layout.xol:#x}, data "
             f"{layout.data:#x}, stack {layout.stack:#x}, flags {layout.flags:#x}",
             "  original:"]
    lines += [f"    {line}" for line in listing(insn.raw, layout.orig, case.arch)]
    if relocated is not None:
        lines.append(f"  copy ({getattr(relocated, 'method', '?')}):")
        lines += [f"    {line}" for line in listing(relocated.code, layout.xol, case.arch)]
    lines.append(f"  first difference: {difference}")
    return lines


# ---- probed straight-line sequences ------------------------------------------------------
def sequence_plan(arch: str, examples: int) -> list[Case]:
    return [Case("sequence", scenarios(arch).map(lambda s: ProbedCase(*s)), examples)]


def sequence_body(subject: Subject, variant: str):
    placing = subject.placings[variant]

    def body(case: ProbedCase):
        insns = case.insns
        why = unjudgeable(insns)
        if why is not None:
            return "skipped", why
        placed: list[str] = []
        try:
            diff, hits = sequence_difference(case.layout, insns, placing, placed)
        except InstrumenterError as refused:
            return "refused", _reason(str(refused))
        except Exception as e:        # noqa: BLE001 -- the strategy's own bug
            raise Counterexample(_sequence_lines(variant, case, f"{type(e).__name__}: {e}",
                                                  placed))
        if diff is not None:
            raise Counterexample(_sequence_lines(variant, case, str(diff), placed))
        if hits != [insns[0].address]:
            raise Counterexample(_sequence_lines(variant, case, f"hits {hits}, expected one",
                                                  placed))
        return "passed", ""
    return body


def _sequence_lines(variant: str, case: ProbedCase, difference: str, placed: list[str]) -> list[str]:
    layout = case.layout
    lines = [f"probed sequence at {layout.orig:#x} with {variant}: {difference}",
             f"  layout: data {layout.data:#x}, stack {layout.stack:#x}, flags {layout.flags:#x}",
             "  program:"]
    lines += [f"    {line}" for line in listing(case.code, layout.orig, layout.arch)]
    lines += [f"  {line}" for line in placed]
    lines.append(f"  first difference: {difference}")
    return lines


# ---- the battery ---------------------------------------------------------------------------
@dataclass
class Property:
    name: str
    plan: list[Case]
    body: object
    case_type: type = object          # what one example is (replay.py runs a printed one again)


def properties(subject: Subject, arch: str, examples: int, classes: list[str] | None = None,
               *, host: bool = False, programs: bool = True) -> list[Property]:
    """What `trapline check` runs on `subject` for `arch`: relocation (under Unicorn, and on the
    host CPU when `host`) where it has a relocator; a probed sequence per placing variant
    and the whole-program properties (process trees, threads, removal and detach) where a
    session can place it (and `programs`: the shipped samples were found), unless `classes`
    narrows the battery to relocation."""
    found = []
    if subject.relocator is not None:
        found.append(Property("relocation", relocation_plan(arch, examples, classes),
                              relocation_body(subject), RelocationCase))
        if host:
            from .host_oracle import check_on_host
            found.append(Property("relocation on the host CPU", host_plan(arch, examples, classes),
                                  relocation_body(subject, check_on_host), RelocationCase))
    if not classes:
        found += [Property(f"probed sequence ({variant})", sequence_plan(arch, examples),
                           sequence_body(subject, variant), ProbedCase)
                  for variant in subject.placings]
    if programs and not classes and subject.session_name is not None:
        found += [Property(p.title, [Case(p.title, p.cases(arch), examples)],
                           guest_body(p, subject.session_name), p.case_type)
                  for p in GUEST_PROPERTIES]
    return found
