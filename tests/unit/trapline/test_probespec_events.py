"""proc: and signal: probe specs (trapline/probespec.py)."""
import pytest

from instrumenter.probes.definitions import PROC, SIGNAL
from trapline.errors import UsageError
from trapline.probespec import parse_probe_spec


@pytest.mark.parametrize("event", ["fork", "vfork", "exec", "exit"])
def test_proc_events(event):
    spec = parse_probe_spec(f"proc:{event}")
    assert (spec.kind, spec.event, spec.text) == (PROC, event, f"proc:{event}")


@pytest.mark.parametrize("text, number", [("signal:SIGUSR1", 10), ("signal:USR1", 10),
                                          ("signal:usr1", 10), ("signal:SIGCHLD", 17),
                                          ("signal:SIGRTMIN", 32), ("signal:SIGRT_2", 34),
                                          ("signal:9", 9), ("signal:64", 64)])
def test_signal_names_and_numbers(text, number):
    spec = parse_probe_spec(text)
    assert (spec.kind, spec.signal) == (SIGNAL, number)


@pytest.mark.parametrize("text, message", [("proc:clone", "proc: takes one of fork, vfork"),
                                           ("proc:", "proc: takes one of"),
                                           ("signal:SIGFOO", "no signal is named 'SIGFOO'"),
                                           ("signal:65", "numbered 1..64"),
                                           ("signal:0", "numbered 1..64"),
                                           ("tracepoint:x", "unknown probe type")])
def test_bad_event_specs_say_what_was_expected(text, message):
    with pytest.raises(UsageError, match=message):
        parse_probe_spec(text)
