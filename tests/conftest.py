"""Project-wide pytest configuration: hypothesis profiles, markers and the quick profile
(`--quick`, tests/quick_profile.py: the points marked thorough left out, hypothesis's "quick"
profile).

The profiles ci, dev and thorough are registered by trapline's pytest plugin
(trapline/testing/plugin.py, which says what each is; loaded here by name, and by the
`pytest11` entry point where trapline is installed). Choose one with
``--hypothesis-profile=NAME``; without it, "ci" is loaded. thorough runs 4 000 examples per
test (per parametrized case): the central relocation property alone then runs 26 class cases
x 4 000 = 104 000 examples, plus 213 forms x 666; the whole property suite is ~350 000
examples, a long run (`pytest tests/property -n 2 --hypothesis-profile=thorough`; docs/testing.md).
"""

from __future__ import annotations

from hypothesis import settings

from trapline.testing import plugin as _plugin  # noqa: F401 -- registers the profiles

# The fixtures too (a project that installs trapline gets them from the entry point).
from trapline.testing.plugin import (trapline_machine, trapline_probed_run,  # noqa: F401
                                     trapline_relocation)

pytest_plugins = ["tests.quick_profile"]

# The plugin applies --hypothesis-profile after conftest files are imported, so this is
# only the default; CI gets "ci" whether or not the CI variable is set.
settings.load_profile("ci")


def pytest_configure(config):
    config.addinivalue_line("markers", "e2e: end-to-end tests on samples and real binaries")
