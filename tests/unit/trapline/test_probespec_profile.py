"""profile:EVENT:N[:stack] probe specs (trapline/probespec.py, issue 18)."""
import pytest

from instrumenter.probes.definitions import PROFILE
from trapline.errors import UsageError
from trapline.probespec import parse_probe_spec


@pytest.mark.parametrize("text, event, interval, stack", [
    ("profile:insn:10000", "insns", 10000, False), ("profile:insns:7", "insns", 7, False),
    ("profile:syscalls:3:stack", "syscalls", 3, True), ("profile:branches:500", "branches", 500, False),
    ("profile:faults:1:stack", "faults", 1, True)])
def test_profile_specs(text, event, interval, stack):
    spec = parse_probe_spec(text)
    assert (spec.kind, spec.event, spec.interval, spec.stack, spec.text) == (PROFILE, event, interval, stack, text)


@pytest.mark.parametrize("text, message", [("profile:hz:99", "profile: counts one of"),
                                           ("profile:insn:0", "needs a positive count"),
                                           ("profile:insn:x", "needs a positive count"),
                                           ("profile:insn", "profile:EVENT:N[:stack] expected"),
                                           ("profile:insn:5:ustack", "profile:EVENT:N[:stack] expected")])
def test_bad_profile_specs_say_what_was_expected(text, message):
    with pytest.raises(UsageError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_probe_spec(text)
