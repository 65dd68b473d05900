"""`trapline check --replay CASE` (trapline/testing/replay.py): every kind of case a report
prints rebuilds from its text into the same case, and text that is not a case is one line."""
import pytest
from hypothesis import given, strategies as st

from trapline.testing.cases import relocation_cases
from trapline.testing.detaching import detach_cases
from trapline.testing.probes import ProbedCase, scenarios
from trapline.testing.replay import CASE_TYPES, case_arch, parse_case
from trapline.testing.threads import threads_cases
from trapline.testing.trees import tree_cases

ARCHES = ("i386", "x86_64")
KINDS = {
    "relocation": lambda arch: relocation_cases(arch),
    "probed sequence": lambda arch: scenarios(arch).map(lambda s: ProbedCase(*s)),
    "process tree": tree_cases,
    "threads": threads_cases,
    "removal and detach": detach_cases,
}


@given(data=st.data(), arch=st.sampled_from(ARCHES), kind=st.sampled_from(sorted(KINDS)))
def test_a_printed_case_replays_as_the_same_case(data, arch, kind):
    case = data.draw(KINDS[kind](arch))
    again = parse_case(repr(case))
    assert type(again) is type(case) and again == case and repr(again) == repr(case)
    assert case_arch(again) == arch


def test_every_case_type_of_the_battery_can_be_replayed():
    from trapline.testing import battery
    from trapline.testing.subjects import subject
    kinds = {p.case_type for arch in ARCHES for name in ("trampoline", "jump")
             for p in battery.properties(subject(name), arch, 3)}
    assert kinds == set(CASE_TYPES)


@pytest.mark.parametrize("text,cause", [
    ("__import__('os')", "not a case: NameError: name '__import__' is not defined"),
    ("1 +", "not a case: SyntaxError"),
    ("bytes(3)", "not a case: a bytes (expected one of RelocationCase"),
])
def test_text_that_is_no_case_is_one_line(text, cause):
    with pytest.raises(ValueError) as error:
        parse_case(text)
    assert str(error.value).startswith(cause) and "\n" not in str(error.value)
