"""Project-wide pytest configuration: hypothesis profiles and markers.

Profiles (choose with ``--hypothesis-profile=NAME``, an option of hypothesis' own pytest
plugin; without it, "ci" is loaded):
  ci        30 examples, derandomized: the same examples on every run and every machine,
            so a red CI run is reproducible locally (determinism is a project rule).
  dev       200 examples for local exploration.
  thorough  100 000 examples for overnight hunts.
Deadlines are off everywhere: the code under test drives an emulator whose speed depends
on the host, and timing goals belong to bench/, never to tests (DESIGN.md, Testing).
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
    max_examples=100_000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
# The plugin applies --hypothesis-profile after conftest files are imported, so this is
# only the default; CI gets "ci" whether or not the CI variable is set.
settings.load_profile("ci")


def pytest_configure(config):
    config.addinivalue_line("markers", "e2e: end-to-end tests on samples and real binaries")
