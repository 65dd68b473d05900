"""The quick profile: `pytest --quick`, the suite for a change being made, beside the full suite
that CI runs (the README's `python3 -m pytest -n 2`).

Three things make it quick, and nothing else changes:

- the points marked `thorough` are deselected. A test's parameters multiply (arch x strategy x
  program x policy); the quick profile keeps, of each such test, points that reach every branch
  the test checks, and the full suite runs the rest. A point is marked where it is declared
  (`pytest.param(..., marks=THOROUGH)`, or `thorough_unless(...)` in a grid);
- a test marked `@alternates("arch")` runs each of its other points on one arch only under
  --quick, the arches taking turns point by point: every case still runs, and every arch runs
  half of them (an ABI's paths are the same for most cases; the full suite runs them all).
  Several names alternate together (`@alternates("arch", "strategy")`): each point of the other
  parameters gets one of their combinations, in turn;
- hypothesis loads the profile "quick" (QUICK_EXAMPLES examples, derandomized as "ci" is, so a
  red quick run is reproducible), unless --hypothesis-profile names another. A property that
  sets its own max_examples keeps it: such numbers are floors the property needs to reach its
  interesting cases (the cases it asserts it reached).

`pytest -m "not thorough" --hypothesis-profile=quick` is the first and last halves alone (no
turns). Loaded by tests/conftest.py (pytest_plugins); docs/testing.md shows the commands.
"""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings

QUICK = "quick"
QUICK_EXAMPLES = 10
MARKER = "thorough"
THOROUGH = pytest.mark.thorough
ALTERNATES = "alternates"

settings.register_profile(QUICK, max_examples=QUICK_EXAMPLES, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])


def thorough_unless(kept: bool, *values, id: str | None = None):     # noqa: A002 -- pytest's name
    """A parameter point, marked thorough unless `kept`: the grid's points the quick profile
    runs are the ones a test names as kept."""
    return pytest.param(*values, marks=() if kept else THOROUGH, id=id)


def alternates(*names: str):
    """The quick profile runs each point of the test's other parameters with one combination of
    the parameters `names`, the combinations taking turns (module docstring)."""
    return getattr(pytest.mark, ALTERNATES)(*names)


def pytest_addoption(parser):
    parser.addoption("--quick", action="store_true", default=False,
                     help="the quick profile: leave out the points marked thorough and run "
                          f"hypothesis's '{QUICK}' profile ({QUICK_EXAMPLES} examples; "
                          "tests/quick_profile.py)")


def pytest_configure(config):
    config.addinivalue_line("markers", f"{MARKER}: a point the quick profile (--quick) leaves out; "
                                       "the full suite runs it")
    config.addinivalue_line("markers", f"{ALTERNATES}(*names): under --quick, each point of the "
                                       "other parameters runs with one combination of these, in turn")
    if config.getoption("quick") and config.getoption("hypothesis_profile", default=None) is None:
        settings.load_profile(QUICK)


def pytest_collection_modifyitems(config, items):
    if not config.getoption("quick"):
        return
    taken = set(map(id, taken_turns(items)))
    left_out = [item for item in items
                if item.get_closest_marker(MARKER) is not None or id(item) not in taken]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        dropped = set(map(id, left_out))
        items[:] = [item for item in items if id(item) not in dropped]


def _key(value):
    try:
        hash(value)
        return value
    except TypeError:
        return repr(value)


def taken_turns(items) -> list:
    """The items the quick profile runs of the tests marked `alternates` (and every other
    item): for each test, its points grouped by the parameters that do not alternate, group i
    keeping the combination i (modulo their number) of the alternating ones, in collection
    order."""
    kept, groups = [], {}
    for item in items:
        marker = item.get_closest_marker(ALTERNATES)
        params = getattr(getattr(item, "callspec", None), "params", None)
        if marker is None or not params:
            kept.append(item)
            continue
        turn = tuple((name, _key(params[name])) for name in marker.args if name in params)
        rest = tuple((name, _key(value)) for name, value in params.items() if name not in marker.args)
        test = item.nodeid.split("[", 1)[0]
        groups.setdefault(test, {}).setdefault(rest, {}).setdefault(turn, item)
    for by_rest in groups.values():
        for index, by_turn in enumerate(by_rest.values()):
            combinations = list(by_turn)
            kept.append(by_turn[combinations[index % len(combinations)]])
    return kept
