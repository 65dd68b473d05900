"""Extended attribute values and setxattr's flags as strace 6.1 prints them (xattr.c's
print_xattr_val: printstr_ex with QUOTE_OMIT_TRAILING_0; printflags with "XATTR_???")."""
from hypothesis import example, given, strategies as st

from kernel_model.debug.abi import Kind
from trapline.strace.strings import escape_bytes, format_xattr_value
from trapline.strace.value_formatters import _SIMPLE
from tests.unit.trapline.strace.fake_memory import FakeMemory


def test_values():
    mem = FakeMemory({0x100: b"v\0", 0x200: b"a" * 31 + b"\0" + b"b" * 8, 0x300: b"ab\0cd"})
    assert format_xattr_value(mem, 0x100, 2) == '"v"'
    assert format_xattr_value(mem, 0x200, 40) == '"' + "a" * 31 + '"'
    assert format_xattr_value(mem, 0x300, 5) == '"ab\\0cd"'
    assert format_xattr_value(mem, 0x300, 0) == '""'
    assert format_xattr_value(mem, 0, 4) == "NULL"
    assert format_xattr_value(mem, 0x300, 65537) == "0x300"
    assert format_xattr_value(mem, 0x900, 4) == "0x900"


def test_flags():
    xattr_flags = _SIMPLE[Kind.XATTR_FLAGS]
    assert [xattr_flags(v, None) for v in (0, 1, 2, 3, 4, 5)] == [
        "0", "XATTR_CREATE", "XATTR_REPLACE", "XATTR_CREATE|XATTR_REPLACE",
        "0x4 /* XATTR_??? */", "XATTR_CREATE|0x4"]


@given(st.binary(max_size=80))
@example(b"x" * 31 + b"\0" + b"y")
def test_at_most_32_bytes_and_a_trailing_nul_ends_the_string(value):
    """Invariant: the first 32 bytes are shown less a NUL that ends them, and "..." follows
    only when more bytes follow and the 32nd was no NUL."""
    text = format_xattr_value(FakeMemory({0x1000: value + b"!"}), 0x1000, len(value))
    window = value[:32]
    ends_with_nul = window.endswith(b"\0")
    shown = window[:-1] if ends_with_nul else window
    more = len(value) > 32 and not ends_with_nul
    assert text == '"' + escape_bytes(shown) + '"' + ("..." if more else "")
