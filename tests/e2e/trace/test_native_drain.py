"""args:N records are drained without loss (issue 16, US 9,336,001's "record arguments into a
per-process buffer in guest memory that the tool drains without loss"): the in-guest append
is a restartable sequence (kernel_model/debug/restartable.py) and a full buffer traps into
the tool, which collects it and sends the thread back to its append
(instrumenter/strategies/native_collector.py). Before, more than the buffer's capacity
between two collections were counted as drops.

The native records are compared with the Python action's on the same run: the same multiset
of argument values, nothing dropped; with threads switched every few instructions, so that
appends are cut half-way and restarted.
"""
from collections import Counter

import pytest

from instrumenter.strategies import native
from instrumenter.probes.definitions import Probe
from trapline import Sandbox
from trapline.probespec import parse_probe_spec

from ..samples.test_samples_run import SAMPLES
from tests.quick_profile import alternates


def _arguments(arch, program, argv, strategy, spec, nargs, quantum=200_000, native_action=None):
    probe = Probe(parse_probe_spec(spec), nargs=nargs, native=native_action)
    result = Sandbox(probes=[probe], strategy=strategy, quantum=quantum).run(
        [str(SAMPLES / arch / program), *argv])
    values = Counter(tuple(record.args[:nargs]) for record in result.records
                     if record.probe == spec)
    return result, values


@pytest.mark.e2e
@pytest.mark.parametrize("arch", ["i386", "x86_64"])
@pytest.mark.parametrize("strategy", ["jump", "trampoline"])
@alternates("arch")
def test_more_records_than_the_buffer_holds_are_all_collected(arch, strategy):
    """fib(20) makes 21891 calls: five fillings of a 4096-record buffer."""
    spec = "uprobe:fib:fib"
    python, expected = _arguments(arch, "fib", ["20"], strategy, spec, 1)
    result, values = _arguments(arch, "fib", ["20"], strategy, spec, 1, native_action="args:1")
    assert result.stdout == python.stdout and result.hits[spec] == 21891
    assert values == expected and sum(values.values()) == 21891
    assert not any(result.dropped.values())


@pytest.mark.e2e
@pytest.mark.parametrize("arch", ["i386", "x86_64"])
@pytest.mark.parametrize("quantum", [1, 3, 7])
@alternates("arch")
def test_appends_cut_by_thread_switches_restart_and_lose_nothing(arch, quantum, monkeypatch):
    """loss_threads' four workers call probed(&their slot) 100 times each; a 7-record buffer
    fills every few calls, and a switch every 1-7 instructions cuts appends half-way. The
    argument tells the threads apart: each of the four pointers is recorded 100 times."""
    parse = native.parse_native

    def small(text):
        spec = parse(text)
        return native.NativeSpec(spec.kind, spec.nargs, capacity=7) if spec.kind == "args" else spec
    monkeypatch.setattr(native, "parse_native", small)
    spec, argv = "uprobe:loss_threads:probed", ["4", "100"]
    python, expected = _arguments(arch, "loss_threads", argv, "jump", spec, 1, quantum)
    result, values = _arguments(arch, "loss_threads", argv, "jump", spec, 1, quantum, "args:1")
    assert result.stdout == python.stdout and result.hits[spec] == sum(expected.values()) == 400
    assert sorted(expected.values()) == [100] * 4
    assert values == expected and not any(result.dropped.values())
