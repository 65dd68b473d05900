"""The battery's whole-program properties (issue 29): process trees with fork/vfork/exec, threads
at small quanta, removal and detach at any point. Our strategies pass them on both arches; a
user's strategy with a planted bug of each kind (a fork that does not share the bookkeeping,
a probe lost while another thread passes, a removal that leaves the int3) is caught by the
property about it, and the report names the case and the first difference."""
import textwrap

import pytest

from trapline.testing import battery
from trapline.testing.subjects import subject

ARCHES = ("i386", "x86_64")
PLANTED = '''
from instrumenter.strategies.singlestep import SingleStepProbes
from instrumenter.strategies.trampoline import TrampolineProbes


class ForgetsForks(TrampolineProbes):
    """A fork child gets the parent's int3s but not the strategy's record of its sites."""
    def fork(self, parent, child):
        pass


class KeepsTheInt3(TrampolineProbes):
    """Removing a probe leaves its int3 (and its trampoline) in place."""
    def remove(self, process, address, hook, owner):
        pass


class PutsTheOriginalBack(SingleStepProbes):
    """Steps the original in place: a thread passing meanwhile is not seen (singlestep)."""
'''
WHOLE_PROGRAM = ("process tree (fork/vfork/exec)", "threads at small quanta", "removal and detach")


@pytest.fixture
def planted(tmp_path, monkeypatch):
    (tmp_path / "plantedprobes.py").write_text(textwrap.dedent(PLANTED))
    monkeypatch.syspath_prepend(str(tmp_path))


def run_property(name: str, arch: str, title: str, examples: int = 30) -> battery.Tally:
    prop = next(p for p in battery.properties(subject(name), arch, examples) if p.name == title)
    tally = battery.Tally(title, name, arch)
    return battery.run_cases(tally, prop.plan, prop.body, seed=0, time_limit=60)


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("strategy", ["trampoline", "jump"])
def test_our_strategies_pass_the_whole_program_properties(strategy, arch):
    for title in WHOLE_PROGRAM:
        tally = run_property(strategy, arch, title, examples=10)
        assert tally.failure is None and tally.error is None, tally.failure or tally.error
        assert tally.run == 10 and tally.accepted >= 5, tally


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("cls,title,cause", [
    ("ForgetsForks", "process tree (fork/vfork/exec)", "the strategy raised: KernelPanic"),
    ("KeepsTheInt3", "removal and detach", "text differs at"),
])
def test_a_planted_process_bug_is_caught_by_its_property(planted, cls, title, cause, arch):
    tally = run_property(f"plantedprobes:{cls}", arch, title)
    assert tally.failure is not None, tally
    assert tally.failure[0].startswith(f"{title} with plantedprobes:{cls}: ")
    assert cause in tally.failure[0] and tally.failure[-1].startswith("  first difference: ")


def test_a_strategy_that_loses_hits_in_threads_is_caught_at_small_quanta(planted):
    tally = run_property("plantedprobes:PutsTheOriginalBack", "i386", "threads at small quanta")
    assert tally.failure is not None, tally
    assert "hits: the workers made " in tally.failure[0]
    # the same strategy keeps every hit in a process tree: the property is about threads
    tree = run_property("plantedprobes:PutsTheOriginalBack", "x86_64", WHOLE_PROGRAM[0], 10)
    assert tree.failure is None and tree.accepted == 10, tree


def test_a_relocator_alone_gets_no_whole_program_property():
    from trapline.testing.subjects import relocator_subject
    names = [p.name for p in battery.properties(relocator_subject("r", lambda *a: None), "i386", 5)]
    assert names == ["relocation"]


def test_the_plugins_program_fixture_passes_ours_and_fails_a_planted_bug_with_the_report(planted):
    from trapline.testing.detaching import DetachCase
    from trapline.testing.plugin import program_check
    case = DetachCase("x86_64", "fib", ["uprobe:fib:fib"], 3, "remove", 1, (0,))
    assert program_check(case, "trampoline") == ("passed", "")
    import plantedprobes
    with pytest.raises(pytest.fail.Exception) as failed:
        program_check(case, plantedprobes.KeepsTheInt3)
    assert str(failed.value).startswith("removal and detach with plantedprobes:KeepsTheInt3: pid 100: "
                                        "text differs at ")
