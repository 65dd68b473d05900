"""printf captured in the guest (native_printf.py) writes what the Python path writes: random
programs of printf blocks (integer conversions with flags, widths and precisions; argument
words and integer literals; with or without a predicate a guard decides) on random argument
words, the stored words formatted by CapturedPrints against the evaluator firing each block
on the same hit."""
from types import SimpleNamespace

from hypothesis import given, settings, strategies as st

from trapline.lang.native import RecordHit, may_exit
from trapline.lang.native_printf import CapturedPrints, go_native_printf
from tests.unit.trapline.lang.fake_hit import FakeHit, consumer

CONVERSIONS = st.builds(lambda flags, width, precision, length, kind: f"%{flags}{width}{precision}{length}{kind}",
                        st.sampled_from(["", "-", "0", "+", " ", "#", "-0"]),
                        st.sampled_from(["", "1", "5", "12"]), st.sampled_from(["", ".0", ".3"]),
                        st.sampled_from(["", "l", "ll", "h", "z"]), st.sampled_from(list("diuxXop")))
LITERALS = st.text(st.sampled_from("ab |:-"), max_size=3)
OPERANDS = st.one_of(st.integers(0, 5).map(lambda i: f"arg{i}"),
                     st.sampled_from(["0", "-1", "255", "0x7fffffff", "-9223372036854775808",
                                      "18446744073709551615", "42"]))
PREDICATES = st.sampled_from(["", "/arg0 > 3/", "/arg1 == 0 || arg2 != 7/", "/!(arg5 <= arg4)/"])


@st.composite
def printf_blocks(draw):
    pieces = draw(st.lists(st.tuples(LITERALS, CONVERSIONS, OPERANDS), min_size=0, max_size=4))
    fmt = "".join(text + conversion for text, conversion, _ in pieces) + draw(LITERALS) + "\\n"
    arguments = "".join(f", {operand}" for _, _, operand in pieces)
    return f'uprobe:/p:f {draw(PREDICATES)} {{ printf("{fmt}"{arguments}); }}'


def _words(bits: int):
    top = (1 << bits) - 1
    return st.one_of(st.integers(0, 9), st.sampled_from([top, top - 1, 1 << (bits - 1), (1 << 31) - 1]),
                     st.integers(0, top))


@settings(max_examples=100, deadline=None)
@given(data=st.data(), blocks=st.lists(printf_blocks(), min_size=1, max_size=3), bits=st.sampled_from([32, 64]))
def test_captured_printf_writes_what_the_python_path_writes(data, blocks, bits):
    program = " ".join(blocks)
    python_side, python_out, python_reports = consumer(program)
    captured_side, captured_out, captured_reports = consumer(program)
    handlers = [(captured_side, block, "f") for block in captured_side.blocks]
    probe = SimpleNamespace(native=None, action=object())
    assert go_native_printf(probe, handlers, may_exit)              # every such program is captured
    printer = CapturedPrints(handlers)
    for _ in range(data.draw(st.integers(1, 6))):
        words = tuple(data.draw(st.lists(_words(bits), min_size=6, max_size=6)))
        for block in python_side.blocks:
            python_side.fire(block, FakeHit(args=words))
        printer.put(words, lambda: RecordHit(7, words, "uprobe:/p:f", "f"))
    assert captured_out.getvalue() == python_out.getvalue()
    assert captured_reports == python_reports == []


def test_which_blocks_are_captured():
    cases = {'printf("%d %x\\n", arg0, 7)': True, 'printf("hi\\n")': True,
             'printf("%s\\n", comm)': False, 'printf("%d\\n", pid)': False,
             'printf("%d\\n", arg0 + 1)': False, 'printf("%c\\n", arg0)': False,
             'printf("%d\\n", arg0); @x = count()': False, 'printf("%d\\n", arg6)': False}
    for body, captured in cases.items():
        made, _, _ = consumer(f"uprobe:/p:f {{ {body}; }}")
        probe = SimpleNamespace(native=None, action=object())
        handlers = [(made, block, "f") for block in made.blocks]
        assert go_native_printf(probe, handlers, may_exit) is captured, body
