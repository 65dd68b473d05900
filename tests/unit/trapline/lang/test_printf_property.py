"""printf's compiled format (printf.py: one %-template a line) writes what its conversions
write one by one, literal text and '%%' included, for any mix of conversions and values."""
from hypothesis import given, strategies as st

from trapline.lang.printf import _convert, compile_format

LITERALS = st.text(st.sampled_from("ab %s{}\\n\t"), max_size=4).map(lambda t: t.replace("%", "%%"))
CONVERSIONS = st.tuples(st.sampled_from(["", "-", "0", "+", " ", "#"]), st.sampled_from(["", "5"]),
                        st.sampled_from(["d", "i", "u", "x", "X", "o", "s", "c", "p"]))
VALUES = st.one_of(st.integers(-(1 << 70), 1 << 70), st.integers(-5, 300), st.text(max_size=3))


@given(st.lists(st.tuples(LITERALS, CONVERSIONS, VALUES), min_size=1, max_size=4), LITERALS)
def test_a_line_is_its_literals_and_its_conversions_in_order(parts, tail):
    fmt = "".join(literal + "%" + flags + width + kind for literal, (flags, width, kind), _ in parts) + tail
    values = [value for _, _, value in parts]
    expected = "".join(literal.replace("%%", "%") + _convert("%" + flags + width, kind, value)
                       for literal, (flags, width, kind), value in parts) + tail.replace("%%", "%")
    assert compile_format(fmt)(values) == expected


def test_the_plain_integer_fast_path_wraps_as_the_general_one():
    line = compile_format("%d|%d%%\n")
    assert line([5, (1 << 64) - 1]) == "5|-1%\n"
    assert compile_format("%d\n")([1 << 63]) == f"{-(1 << 63)}\n"
    assert compile_format("100%%\n")([]) == "100%\n"
