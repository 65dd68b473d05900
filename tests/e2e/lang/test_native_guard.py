"""Predicates compiled into the guest (guards.py, instrumenter/strategies/native_guard.py): a
site whose blocks only count under one integer predicate of its arguments counts in the guest
behind that predicate; blocks of argument arithmetic with such predicates store only the hits
their predicates' disjunction accepts. The maps are the Python path's (the same blocks with a
second consumer reading comm on the site, which keeps it in Python), on both arches."""
import io

import pytest

from trapline.lang.runner import make_consumers, run
from tests.e2e.lang.lang_run import ARCHES, maps, sample

pytestmark = pytest.mark.e2e
PREDICATE = "arg0 >= 4 && arg0 != 7 || arg0 == 1"


def _run(programs: list[str], argv: list[str], strategy: str):
    out = io.StringIO()
    consumers = make_consumers([(p, "-e") for p in programs], out, lambda line: None)
    outcome = run(consumers, argv, {"capture": True}, strategy=strategy)
    return maps(out.getvalue()), outcome


def _python_path(program: str, argv: list[str], strategy: str) -> dict:
    spec = f"uprobe:{argv[0]}:fib"
    found, outcome = _run([program, f"{spec} {{ @c[comm] = count(); }}"], argv, strategy)
    assert outcome.guarded_sites == outcome.native_sites == outcome.argument_sites == []
    del found["@c"]
    return found


def _fib_calls(n: int) -> dict[int, int]:
    """How often a run of fib(n) enters fib(k), k = 0..n (samples/fib.c: fib(k) calls fib(k-1)
    and fib(k-2) for k >= 2)."""
    calls = {k: 0 for k in range(0, n + 1)}
    calls[n] = 1
    for k in range(n, 1, -1):
        calls[k - 1] += calls[k]
        calls[k - 2] += calls[k]
    return calls


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("strategy", ["jump", "trampoline", "emulate"])
def test_a_counting_block_with_an_integer_predicate_counts_behind_a_guard(arch, strategy):
    """emulate places no guest code: its hook decides the guard in Python (NativeHit)."""
    argv = [sample(arch, "fib"), "12"]
    spec = f"uprobe:{argv[0]}:fib"
    program = f"{spec} /{PREDICATE}/ {{ @ = count(); }}"
    found, outcome = _run([program], argv, strategy)
    assert outcome.native_sites == outcome.guarded_sites == [spec]
    calls = _fib_calls(12)
    expected = sum(n for k, n in calls.items() if (k >= 4 and k != 7) or k == 1)
    assert found == _python_path(program, argv, strategy) == {"@": {"": str(expected)}}


@pytest.mark.parametrize("arch", ARCHES)
def test_keyed_aggregations_store_only_the_hits_a_predicate_accepts(arch):
    argv = [sample(arch, "fib"), "12"]
    spec = f"uprobe:{argv[0]}:fib"
    program = (f"{spec} /arg0 > 5/ {{ @[arg0] = sum(arg0); @h = hist(arg0); }} "
               f"{spec} /arg0 == 2 || arg0 == 0x100000000/ {{ @two = count(); }}")
    found, outcome = _run([program], argv, "jump")
    assert outcome.argument_sites == outcome.guarded_sites == [spec] and outcome.native_sites == []
    calls = _fib_calls(12)
    assert found == _python_path(program, argv, "jump")
    assert found["@"] == {str(k): str(k * calls[k]) for k in range(12, 5, -1)}
    assert found["@two"] == {"": str(calls[2])}


@pytest.mark.parametrize("arch", ARCHES)
def test_blocks_counting_under_different_predicates_share_one_guarded_store(arch):
    """Two counts under different predicates cannot share one counter: the site stores the
    hits either accepts, and each block counts its own."""
    argv = [sample(arch, "fib"), "10"]
    spec = f"uprobe:{argv[0]}:fib"
    program = f"{spec} /arg0 == 1/ {{ @ones = count(); }} {spec} /arg0 > 8/ {{ @big = count(); }}"
    found, outcome = _run([program], argv, "jump")
    assert outcome.argument_sites == outcome.guarded_sites == [spec]
    calls = _fib_calls(10)
    assert found == _python_path(program, argv, "jump") == {
        "@ones": {"": str(calls[1])}, "@big": {"": str(calls[9] + calls[10])}}
