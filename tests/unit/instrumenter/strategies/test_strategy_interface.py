"""instrumenter/strategies/base.py: every strategy of the registry has the one interface —
place, remove, refusal, fork, forget — and its answers agree: `refusal` says None exactly where
`place` takes the site (and patches nothing either way), `remove` gives the original bytes back,
a fork child's space gets the same entries and a forgotten space none (space_table.py).
"""
import io
from pathlib import Path
from types import SimpleNamespace

import pytest

from instrumenter.errors import InstrumenterError
from instrumenter.insn.decode import boundaries
from instrumenter.strategies import registry as strategies
from instrumenter.strategies.base import ProbeStrategy
from instrumenter.strategies.space_table import SpaceTable
from instrumenter.probes.definitions import Probe
from instrumenter.tracing.session import Session
from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Kernel, KernelConfig
from trapline.probespec import parse_probe_spec

ROOT = Path(__file__).resolve().parents[4]


def _session(arch: str, program: str = "fileio"):
    kernel = Kernel(KernelConfig(stdin=CapturedOutput(), stdout=CapturedOutput(),
                                 stderr=CapturedOutput(), report=io.StringIO()))
    path = str(ROOT / "samples" / "bin" / arch / program).encode()
    process = kernel.spawn(path, [path], [])
    probe = Probe(parse_probe_spec(f"uprobe:{program}:main"))
    return kernel, process, Session(kernel, [probe]), probe


def _boundaries(kernel, process, name: str) -> list[int]:
    function = process.image.symbols.lookup(name)
    code = kernel.debug.read_memory(process, function.addr, function.size)
    return boundaries(code, function.addr, kernel.debug.arch(process).name)


def test_every_registered_strategy_is_a_probe_strategy():
    _, _, session, _ = _session("x86_64")
    assert set(session.strategies) == set(strategies.NAMES)
    for name, strategy in session.strategies.items():
        assert isinstance(strategy, ProbeStrategy), name
        for table in strategy.tables:
            assert isinstance(getattr(strategy, table), SpaceTable), (name, table)


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
@pytest.mark.parametrize("name", strategies.NAMES)
def test_refusal_says_none_exactly_where_place_takes_the_site_and_remove_restores(arch, name):
    kernel, process, session, probe = _session(arch)
    debug, strategy = kernel.debug, session.strategies[name]
    pristine = {}
    taken = refused = 0
    for function in ("close", "main"):
        for address in _boundaries(kernel, process, function):
            before = debug.read_memory_raw(process, address, 8)
            pristine[address] = before
            reason = strategy.refusal(process, address)
            assert debug.read_memory_raw(process, address, 8) == before, "refusal patched"
            hook = lambda thread, at: None          # noqa: E731
            try:
                strategy.place(process, address, hook, probe.spec.text)
            except InstrumenterError as error:
                assert reason is not None, f"{name} {address:#x}: refusal None, place: {error}"
                assert debug.read_memory_raw(process, address, 8) == before
                refused += 1
                continue
            assert reason is None, f"{name} {address:#x}: place took it, refusal said {reason}"
            taken += 1
            assert debug.read_memory(process, address, 8) == before     # the door's view
            strategy.remove(process, address, hook, probe.spec.text)
            assert debug.read_memory_raw(process, address, 8) == before
            assert debug.patch_at(process, address) is None
    assert taken >= 3, (name, taken, refused)          # a floor: the check is not vacuous


def test_space_table_forks_and_forgets_by_serial():
    parent, child, other = (SimpleNamespace(serial=n) for n in (1, 2, 3))
    table = SpaceTable({(1, 0x10): "a", (1, 0x20): "b", 1: ["area"], (3, 0x10): "c"})
    assert table.fork(parent, parent) == []                      # a shared space: nothing
    new = table.fork(parent, child, copy=lambda v: v * 2 if isinstance(v, str) else list(v))
    assert new == [((2, 0x10), "aa"), ((2, 0x20), "bb"), (2, ["area"])]
    assert table[2] is not table[1]
    assert sorted(table.forget(parent), key=str) == [["area"], "a", "b"]
    assert set(table) == {(2, 0x10), (2, 0x20), 2, (3, 0x10)}
    assert table.forget(other) == ["c"] and table.forget(other) == []
