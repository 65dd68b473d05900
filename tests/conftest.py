"""Project-wide pytest configuration: hypothesis profiles and markers.

Profiles (choose with ``--hypothesis-profile=NAME``, an option of hypothesis' own pytest
plugin; without it, "ci" is loaded):
  ci        30 examples, derandomized: the same examples on every run and every machine,
            so a red CI run is reproducible locally (determinism is a project rule).
  dev       200 examples for local exploration.
  thorough  4 000 examples per test (per parametrized case): the central relocation property
            alone then runs 26 class cases x 4 000 = 104 000 examples, plus 213 forms x 666;
            the whole property suite is ~350 000 examples, about half an hour on 2 cores
            (`pytest tests/property -n 2 --hypothesis-profile=thorough`). Randomized: each
            run explores new examples (a failure prints its reproduction blob).
Deadlines are off everywhere: the code under test drives an emulator whose speed depends
on the host, and timing goals belong to bench/, never to tests (docs/ARCHITECTURE.md, Testing).
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=30,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "dev", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "thorough",
    max_examples=4_000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
# The plugin applies --hypothesis-profile after conftest files are imported, so this is
# only the default; CI gets "ci" whether or not the CI variable is set.
settings.load_profile("ci")


def pytest_configure(config):
    config.addinivalue_line("markers", "e2e: end-to-end tests on samples and real binaries")
