"""args.NAME in a uprobe from the binary's DWARF (trapline/lang/dwarf_args.py): parameter names,
their argument words in the psABI's order, their types; and what is refused, with the reason."""
import pytest
from hypothesis import given, strategies as st

from tests.unit.trapline.lang.gcc_program import build
from trapline.lang.checks import check
from trapline.lang.dwarf_args import DwarfArgError, Parameter, lookup, parameters_of
from trapline.lang.errors import ProgramError
from trapline.lang.parser import parse

ARCHES = ("i386", "x86_64")
# greet(int n, const char *name, unsigned char tag, big_t big, enum colour colour):
# name -> (size, signed, first word, words) on each arch
GREET = {
    "x86_64": {"n": (4, True, 0, 1), "name": (8, False, 1, 1), "tag": (1, False, 2, 1),
               "big": (8, True, 3, 1), "colour": (4, True, 4, 1)},
    # i386: all on the stack, 4-byte words; the long long takes two, low word first
    "i386": {"n": (4, True, 0, 1), "name": (4, False, 1, 1), "tag": (1, False, 2, 1),
             "big": (8, True, 3, 2), "colour": (4, True, 5, 1)},
}


@pytest.fixture(scope="module", params=ARCHES)
def program(request, tmp_path_factory):
    return request.param, build(tmp_path_factory.mktemp(request.param), request.param)


def test_parameters_in_the_psabi_order_with_their_types(program):
    arch, path = program
    params = parameters_of(path, "greet")["greet"]
    assert list(params) == list(GREET[arch])
    for name, (size, signed, word, words) in GREET[arch].items():
        assert params[name] == Parameter(name, word, size, signed, words)


def test_a_wildcard_gives_each_function_it_matches(program):
    _, path = program
    found = lookup(path, "gree*", "n")
    assert list(found) == ["greet"] and found["greet"].word == 0


@pytest.mark.parametrize("function, field, words", [
    ("floats", "after", "it follows scale, a floating-point number passed by value"),
    ("floats", "scale", "a floating-point number passed by value"),
    ("by_value", "after", "it follows pair, a structure passed by value"),
    ("greet", "nosuch", "greet has no parameter 'nosuch' (its parameters: n, name, tag, big, colour)"),
    ("nosuch", "n", "has no DWARF for nosuch (build it with -g)"),
])
def test_refused_with_the_reason(program, function, field, words):
    _, path = program
    with pytest.raises(DwarfArgError) as refused:
        lookup(path, function, field)
    assert words in str(refused.value)


def test_the_checks_read_a_host_binary_before_the_run(program):
    _, path = program
    text = f'uprobe:{path}:greet {{ printf("%d\\n", args.big); }}'
    program_tree = parse(text)
    check(program_tree)
    assert program_tree.probes[0].body[0].expr.args[1].uprobe
    with pytest.raises(ProgramError) as refused:
        check(parse(f"uprobe:{path}:greet+4 {{ @x = args.n; }}"))
    assert "needs a function's entry" in refused.value.message
    with pytest.raises(ProgramError) as refused:
        check(parse(f"uprobe:{path}:greet {{ @x = args.nosuch; }}"))
    assert "greet has no parameter 'nosuch'" in refused.value.message
    check(parse("uprobe:libnosuch.so.1:f { @x = args.n; }"))     # read when it is mapped


@given(size=st.sampled_from([1, 2, 4, 8]), signed=st.booleans(), words=st.sampled_from([1, 2]),
       value=st.integers(-(1 << 63), (1 << 64) - 1), junk=st.integers(0, (1 << 64) - 1))
def test_a_parameter_is_its_words_cut_to_its_type(size, signed, words, value, junk):
    """Whatever the bits above the parameter's size in its words (a caller's leftovers in a
    register), the value is the low `size` bytes read as the type says."""
    if words == 2:
        size = 8
    word_bits = 32 if words == 2 else 64
    raw = value & ((1 << 64) - 1)
    low = (raw & ((1 << size * 8) - 1)) | (junk << size * 8 & ((1 << 64) - 1) if size < 8 else 0)
    argument_words = [low & ((1 << word_bits) - 1), low >> word_bits] if words == 2 else [low]
    parameter = Parameter("p", 0, size, signed, words)
    got = parameter.value(lambda index: argument_words[index])
    expected = int.from_bytes(raw.to_bytes(8, "little")[:size], "little", signed=signed)
    assert got == expected
