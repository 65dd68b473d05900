"""The pytest plugin (entry point `pytest11`: trapline.testing.plugin): the hypothesis profiles
and fixtures to check a strategy from a test file in any repository.

Profiles (choose with ``--hypothesis-profile=NAME``, an option of hypothesis' own plugin):
  ci        30 examples, derandomized: the same examples on every run and every machine,
            so a red CI run is reproducible locally.
  dev       200 examples for local exploration.
  thorough  4 000 examples per test (per parametrized case), randomized: each run explores
            new examples (a failure prints its reproduction blob).
Deadlines are off everywhere: the code under test drives an emulator whose speed depends on
the host (a first example, which builds the decoders and a Machine, takes longer than
hypothesis's default 200 ms deadline); timing goals belong to benchmarks, never to tests. A
project chooses its profile (`settings.load_profile("ci")` in its conftest.py, or
--hypothesis-profile); one that chose none gets hypothesis's default with no deadline
("trapline-default"), and nothing else of hypothesis's defaults changed. On a CI service
(the CI variable set), hypothesis loads its profile named "ci" by itself: there it is this one.

Fixtures (session-scoped: hypothesis runs many examples through one test function):
  trapline_machine      machine_for(layout, original_bytes, copy_bytes) -> a Machine
  trapline_relocation   check(case, strategy) -> Verdict; fails the test with the report
                        `trapline check` prints when the copy behaves differently
  trapline_probed_run   check(case, strategy) -> hits; fails the test when the probed
                        sequence ends differently from the unprobed one or hit != once
  trapline_program      check(case, strategy) -> (status, reason); fails the test when the
                        whole program (a TreeCase, ThreadsCase or DetachCase: process trees,
                        threads at small quanta, removal and detach) behaves differently
                        probed by the strategy than unprobed
`strategy` is a class (with `relocator` for the relocation check), a relocator function, or
a name `trapline check --strategy` takes (for trapline_program: a class importable by its
module's name, or such a name).

Ten lines in a user's repository:

    from hypothesis import given
    from trapline.testing import relocation_cases
    from trapline.testing.probes import ProbedCase, scenarios
    from mypackage import MyStrategy

    @given(case=relocation_cases("x86_64"))
    def test_relocation(case, trapline_relocation):
        trapline_relocation(case, MyStrategy)

    @given(case=scenarios("x86_64").map(lambda s: ProbedCase(*s)))
    def test_probed(case, trapline_probed_run):
        trapline_probed_run(case, MyStrategy)
"""
from __future__ import annotations

import pytest

try:
    from hypothesis import HealthCheck, settings
except ImportError:              # trapline installed without its testing extra: no profiles
    settings = None

if settings is not None:
    settings.register_profile("ci", max_examples=30, deadline=None, derandomize=True,
                              suppress_health_check=[HealthCheck.too_slow])
    settings.register_profile("dev", max_examples=200, deadline=None,
                              suppress_health_check=[HealthCheck.too_slow])
    settings.register_profile("thorough", max_examples=4_000, deadline=None,
                              suppress_health_check=[HealthCheck.too_slow])
    settings.register_profile("trapline-default", deadline=None)


def pytest_configure(config):
    """No profile chosen (none loaded, no --hypothesis-profile): the default without deadline."""
    if settings is None:
        return
    chosen = config.getoption("hypothesis_profile", default=None)
    if chosen is None and settings.default is settings.get_profile("default"):
        settings.load_profile("trapline-default")


def _subject(strategy):
    from .subjects import Subject, relocator_subject, subject
    if isinstance(strategy, Subject):
        return strategy
    if isinstance(strategy, str):
        return subject(strategy)
    if isinstance(strategy, type):
        from .probes import Placing
        name = f"{strategy.__module__}:{strategy.__qualname__}"
        return Subject(name, getattr(strategy, "relocator", None),
                       {name: Placing(lambda session: strategy(session))})
    return relocator_subject(getattr(strategy, "__name__", repr(strategy)), strategy)


@pytest.fixture(scope="session")
def trapline_machine():
    from .layouts import machine_for
    return machine_for


@pytest.fixture(scope="session")
def trapline_relocation():
    from .battery import Counterexample, relocation_body

    def check(case, strategy):
        subj = _subject(strategy)
        if subj.relocator is None:
            pytest.fail(f"{subj.name} has no relocator (a `relocator` attribute)")
        try:
            return relocation_body(subj)(case)
        except Counterexample as found:
            pytest.fail("\n".join(found.lines), pytrace=False)
    return check


@pytest.fixture(scope="session")
def trapline_probed_run():
    from .battery import Counterexample, sequence_body

    def check(case, strategy):
        subj = _subject(strategy)
        variant = next(iter(subj.placings), None)
        if variant is None:
            pytest.fail(f"{subj.name} cannot be placed on the stand-in kernel")
        try:
            return sequence_body(subj, variant)(case)
        except Counterexample as found:
            pytest.fail("\n".join(found.lines), pytrace=False)
    return check


def program_check(case, strategy):
    """The whole-program property that takes `case`, run once with `strategy` placed by a
    tracing Session (what the trapline_program fixture returns)."""
    from .battery import Counterexample
    from .process_properties import GUEST_PROPERTIES, guest_body
    prop = next((p for p in GUEST_PROPERTIES if isinstance(case, p.case_type)), None)
    if prop is None:
        pytest.fail(f"{type(case).__name__} is not a whole-program case (have: "
                    f"{', '.join(p.case_type.__name__ for p in GUEST_PROPERTIES)})")
    name = strategy if isinstance(strategy, str) else \
        f"{strategy.__module__}:{strategy.__qualname__}"
    try:
        return guest_body(prop, name)(case)
    except Counterexample as found:
        pytest.fail("\n".join(found.lines), pytrace=False)


@pytest.fixture(scope="session")
def trapline_program():
    return program_check
