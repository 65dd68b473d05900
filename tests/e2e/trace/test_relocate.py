"""The relocate strategy on the samples (US 6,957,421 / US 6,898,785): every
function of a sample that can be relocated is probed at its entry, the output is the
unprobed run's and the hits are the trampoline strategy's; fib's probe counts every call with
Python and native actions; a function with an indirect jump is refused with its reason.
"""
from collections import Counter

import pytest

from instrumenter.errors import InstrumenterError
from instrumenter.strategies.relocate.blocks import analyse
from instrumenter.probes.definitions import Probe
from loader.elf import load_elf_file
from trapline import Sandbox
from trapline.probespec import parse_probe_spec

from .test_probes_fib import fibonacci
from .test_probes_strategies import _call_arguments
from ..samples.test_samples_run import SAMPLES
from tests.quick_profile import alternates


def relocatable_functions(arch: str, name: str) -> tuple[list[str], dict[str, str]]:
    """The sample's functions the strategy takes, and the refused ones with their reasons."""
    image = load_elf_file(str(SAMPLES / arch / name))
    taken, refused = [], {}
    for symbol in image.symbols:
        if symbol.kind != "func" or not symbol.size or image.symbols.lookup(symbol.name) is not symbol:
            continue
        seg = next(s for s in image.segments if s.vaddr <= symbol.addr < s.vaddr + len(s.data))
        code = seg.data[symbol.addr - seg.vaddr:symbol.addr - seg.vaddr + symbol.size]
        found = analyse(code, symbol.addr, symbol.name, arch)
        if isinstance(found, InstrumenterError):
            refused[symbol.name] = str(found)
        else:
            taken.append(symbol.name)
    return taken, refused


def _probes(name: str, functions) -> list[Probe]:
    return [Probe(parse_probe_spec(f"uprobe:{name}:{f}")) for f in functions]


@pytest.mark.e2e
@pytest.mark.parametrize("arch", ["i386", "x86_64"])
@pytest.mark.parametrize("name,args", [("signals", []), ("fork_pipe", []), ("callchain", []),
                                       ("vfork_nested", []), ("fileio", [])])
@alternates("arch")
def test_every_relocatable_function_probed_runs_as_unprobed_with_the_trampolines_hits(arch, name,
                                                                                      args):
    binary = [str(SAMPLES / arch / name)] + args
    functions, refused = relocatable_functions(arch, name)
    assert len(functions) >= 20, (functions, refused)            # a floor: not vacuous
    plain = Sandbox().run(binary)
    relocated = Sandbox(probes=_probes(name, functions), strategy="relocate").run(binary)
    trampoline = Sandbox(probes=_probes(name, functions), strategy="trampoline").run(binary)
    assert (relocated.stdout, relocated.exit_code) == (plain.stdout, plain.exit_code)
    assert relocated.hits == trampoline.hits and sum(relocated.hits.values()) > 10


@pytest.mark.e2e
@pytest.mark.parametrize("arch", ["i386", "x86_64"])
@pytest.mark.parametrize("native", [None, "count", "args:1"])
@alternates("arch")
def test_relocated_fib_counts_every_call(arch, native):
    n = 12
    binary = [str(SAMPLES / arch / "fib"), str(n)]
    probed = Sandbox(probes=[Probe(parse_probe_spec("uprobe:fib:fib"), native=native),
                             Probe(parse_probe_spec("uprobe:fib:fib+1"))],
                     strategy="relocate").run(binary)
    calls = 2 * fibonacci(n + 1) - 1
    assert probed.stdout == f"fib({n}) = {fibonacci(n)}\n".encode()
    assert probed.hits == {"uprobe:fib:fib": calls, "uprobe:fib:fib+1": calls}
    entries = [r for r in probed.records if r.probe == "uprobe:fib:fib"]
    if native == "count":
        assert entries == []
    else:
        assert Counter(r.args[0] for r in entries) == _call_arguments(n)


@pytest.mark.e2e
def test_a_function_with_an_indirect_jump_is_refused_with_its_reason():
    _, refused = relocatable_functions("x86_64", "hello")
    reasons = [r for r in refused.values() if "indirect jump" in r]
    assert reasons
    name = next(n for n, r in refused.items() if "indirect jump" in r)
    with pytest.raises(InstrumenterError, match="indirect jump"):
        Sandbox(probes=_probes("hello", [name]), strategy="relocate").run([str(SAMPLES / "x86_64" / "hello")])
