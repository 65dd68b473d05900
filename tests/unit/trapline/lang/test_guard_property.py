"""A predicate compiled into the guest (guards.py, native_guard.py) accepts exactly the hits the
evaluator's predicate accepts: random predicates parsed from text, random argument words, the
guest's decision (the guarded part run on the machine) against the Python path's count.
"""
from hypothesis import given, settings, strategies as st
import pytest

from instrumenter.strategies.native_guard import Known
from trapline.lang.guards import predicate_guard
from tests.unit.emu.guest import ARCHES
from tests.unit.instrumenter.strategies.test_native_guard import BITS, GuestGuard, words
from tests.unit.trapline.lang.fake_hit import FakeHit, consumer

OPS = ("==", "!=", "<", "<=", ">", ">=")
CONSTANT_TEXTS = st.one_of(st.integers(-5, 10).map(str),
                           st.sampled_from(["0x7fffffff", "0x80000000", "0xffffffff", "0x100000000",
                                            "-1", "(1 << 40)", "(3 * 7 - 1)", "(-(1 << 63))",
                                            "0xffffffffffffffff", "(1 << 63)", "(10 / 3)"]))
OPERANDS = st.one_of(st.integers(0, 5).map(lambda i: f"arg{i}"), CONSTANT_TEXTS)
COMPARISONS = st.builds(lambda a, op, b: f"{a} {op} {b}", OPERANDS, st.sampled_from(OPS), OPERANDS)
CONDITIONS = st.recursive(
    st.one_of(COMPARISONS, OPERANDS),
    lambda inner: st.one_of(st.builds(lambda a, b: f"({a}) && ({b})", inner, inner),
                            st.builds(lambda a, b: f"({a}) || ({b})", inner, inner),
                            st.builds(lambda a: f"!({a})", inner)), max_leaves=4)


def _python_accepts(made, args) -> bool:
    block = made.blocks[0]
    made.fire(block, FakeHit(args=args))
    counted = made.maps.get("@").values.get(())
    return counted is not None and counted.value == 1


@pytest.mark.parametrize("arch", ARCHES)
@settings(max_examples=120, deadline=None)
@given(data=st.data(), predicate=CONDITIONS)
def test_the_compiled_predicate_decides_as_the_evaluator(arch, data, predicate):
    made, _, reports = consumer(f"uprobe:/p:f /{predicate}/ {{ @ = count(); }}")
    guard = predicate_guard(made.blocks[0])
    assert guard is not None, predicate              # every predicate of this grammar compiles
    args = tuple(data.draw(st.lists(st.one_of(words(arch), st.integers(0, 12)), min_size=6, max_size=6)))
    expected = _python_accepts(made, args)
    assert not reports
    assert GuestGuard(arch, guard).decide(args) == expected, (predicate, args)


@pytest.mark.parametrize("predicate, compiled", [
    ("arg0 > 100", True), ("arg0 == 3 && !(arg5 < arg1) || 7", True), ("arg0", True),
    ("pid == 1", False), ("arg0 + 1 > 2", False), ("(arg0 > 1) == 1", False),
    ('comm == "sort"', False), ("arg6 > 1", False), ("arg0 > 1 / 0", False), ("retval > 0", False),
])
def test_which_predicates_compile(predicate, compiled):
    kind = "uretprobe" if "retval" in predicate else "uprobe"
    made, _, _ = consumer(f"{kind}:/p:f /{predicate}/ {{ @ = count(); }}")
    assert (predicate_guard(made.blocks[0]) is not None) is compiled


def test_no_predicate_is_a_guard_that_accepts_everything():
    made, _, _ = consumer("uprobe:/p:f { @ = count(); }")
    assert predicate_guard(made.blocks[0]) == Known(True)


@pytest.mark.parametrize("arch", ARCHES)
def test_words_beyond_the_signed_range_compare_unsigned_as_the_evaluator(arch):
    """arg0 > -1 holds for every word (the evaluator compares the unsigned word with -1);
    arg0 > 0x7fffffff and the top word as the evaluator sees them."""
    top = (1 << BITS[arch]) - 1
    for predicate in ("arg0 > -1", "arg0 > 0x7fffffff", f"arg0 == {top}", "arg0 < 0x80000000"):
        made, _, _ = consumer(f"uprobe:/p:f /{predicate}/ {{ @ = count(); }}")
        guest = GuestGuard(arch, predicate_guard(made.blocks[0]))
        for word in (0, 0x7FFFFFFF, 0x80000000, top):
            args = (word, 0, 0, 0, 0, 0)
            fresh, _, _ = consumer(f"uprobe:/p:f /{predicate}/ {{ @ = count(); }}")
            assert guest.decide(args) == _python_accepts(fresh, args), (predicate, word)
