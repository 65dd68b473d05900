"""Keyed aggregations in a guest hash table (trapline/lang/native_table.py,
instrumenter/strategies/native_table.py): a site whose every block is one
`@MAP[argN...] = count/sum/avg/min/max(argK)` keeps its maps in the guest, with the maps the
Python path gives (the same blocks with a second consumer reading comm on the site, which
keeps it in Python), on both arches and under the strategies that place guest code; a table
too small for the keys drains into the tool and loses nothing."""
import io

import pytest

from trapline.lang.runner import make_consumers, run
from tests.e2e.lang.lang_run import ARCHES, maps, sample

pytestmark = pytest.mark.e2e


def _run(programs: list[str], argv: list[str], strategy: str):
    out = io.StringIO()
    consumers = make_consumers([(p, "-e") for p in programs], out, lambda line: None)
    outcome = run(consumers, argv, {"capture": True}, strategy=strategy)
    return maps(out.getvalue()), outcome


def _python_path(program: str, argv: list[str], strategy: str) -> dict:
    spec = f"uprobe:{argv[0]}:fib"
    found, outcome = _run([program, f"{spec} {{ @comm[comm] = count(); }}"], argv, strategy)
    assert outcome.table_sites == outcome.native_sites == []
    del found["@comm"]
    return found


def _fib_calls(n: int) -> dict[int, int]:
    """How often a run of fib(n) enters fib(k) (samples/fib.c: fib(k) calls fib(k-1), fib(k-2))."""
    calls = {k: 0 for k in range(0, n + 1)}
    calls[n] = 1
    for k in range(n, 1, -1):
        calls[k - 1] += calls[k]
        calls[k - 2] += calls[k]
    return calls


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("strategy", ["jump", "trampoline", "emulate"])
def test_keyed_aggregations_are_computed_in_the_guest(arch, strategy):
    """emulate places no guest code: its hook stores the hit and the blocks run in Python."""
    argv = [sample(arch, "fib"), "12"]
    spec = f"uprobe:{argv[0]}:fib"
    program = (f"{spec} {{ @c[arg0] = count(); }} {spec} {{ @s[arg0] = sum(arg1); }} "
               f"{spec} {{ @lo[arg0] = min(arg1); }} {spec} {{ @hi[arg0] = max(arg1); }} "
               f"{spec} {{ @a[arg0] = avg(arg1); }}")
    found, outcome = _run([program], argv, strategy)
    assert outcome.table_sites == [spec]
    calls = _fib_calls(12)
    assert found == _python_path(program, argv, strategy)
    assert found["@c"] == {str(k): str(n) for k, n in calls.items()}


@pytest.mark.parametrize("arch", ARCHES)
def test_aggregations_without_a_key(arch):
    argv = [sample(arch, "fib"), "12"]
    spec = f"uprobe:{argv[0]}:fib"
    program = (f"{spec} {{ @s = sum(arg0); }} {spec} {{ @lo = min(arg0); }} "
               f"{spec} {{ @hi = max(arg0); }} {spec} {{ @a = avg(arg0); }} {spec} {{ @n = count(); }}")
    found, outcome = _run([program], argv, "jump")
    assert outcome.table_sites == [spec]
    calls = _fib_calls(12)
    assert found == _python_path(program, argv, "jump")
    total = sum(k * n for k, n in calls.items())
    assert found == {"@s": {"": str(total)}, "@lo": {"": "0"}, "@hi": {"": "12"},
                     "@a": {"": str(total // sum(calls.values()))}, "@n": {"": str(sum(calls.values()))}}


@pytest.mark.parametrize("arch", ARCHES)
def test_a_predicate_runs_in_front_of_the_table(arch):
    argv = [sample(arch, "fib"), "12"]
    spec = f"uprobe:{argv[0]}:fib"
    program = f"{spec} /arg0 > 5/ {{ @[arg0] = count(); }}"
    found, outcome = _run([program], argv, "jump")
    assert outcome.table_sites == outcome.guarded_sites == [spec]
    calls = _fib_calls(12)
    assert found == _python_path(program, argv, "jump")
    assert found["@"] == {str(k): str(calls[k]) for k in range(12, 5, -1)}


@pytest.mark.parametrize("arch", ARCHES)
def test_two_keys_of_different_arguments(arch):
    """fib's second argument word is whatever the caller left there: the point is that the
    guest's pairs equal the Python path's."""
    argv = [sample(arch, "fib"), "10"]
    spec = f"uprobe:{argv[0]}:fib"
    program = f"{spec} {{ @[arg0, arg1] = sum(arg0); }}"
    found, outcome = _run([program], argv, "jump")
    assert outcome.table_sites == [spec]
    assert found == _python_path(program, argv, "jump")
    assert sum(int(v) for v in found["@"].values()) == sum(k * n for k, n in _fib_calls(10).items())


@pytest.mark.parametrize("arch", ARCHES)
def test_a_table_too_small_for_the_keys_drains_and_loses_nothing(arch, monkeypatch):
    """Four entries for fib(12)'s thirteen keys: the hits that find the table full trap into
    the tool, which merges the table into the maps and empties it (native_table.py)."""
    from trapline.lang import native_table
    monkeypatch.setattr(native_table, "TABLE_ENTRIES", 4)
    argv = [sample(arch, "fib"), "12"]
    spec = f"uprobe:{argv[0]}:fib"
    program = f"{spec} {{ @[arg0] = count(); }} {spec} {{ @s[arg0] = max(arg0); }}"
    found, outcome = _run([program], argv, "jump")
    assert outcome.table_sites == [spec]
    calls = _fib_calls(12)
    assert found["@"] == {str(k): str(n) for k, n in calls.items()}
    assert found == _python_path(program, argv, "jump")


@pytest.mark.parametrize("arch", ARCHES)
def test_fork_children_keep_their_own_tables(arch):
    """A fork child starts with an empty copy of the table (native_collector.fork): each
    process's hits count once. fork_probe: the parent's work(2) before the fork, the child's
    5 and the parent's 3 after it, each calling leaf(0) and leaf(1)."""
    argv = [sample(arch, "fork_probe")]
    spec = f"uprobe:{argv[0]}:leaf"
    program = f"{spec} {{ @[arg0] = count(); }}"
    found, outcome = _run([program], argv, "jump")
    assert outcome.table_sites == [spec]
    assert found == {"@": {"0": "9", "1": "9"}}
