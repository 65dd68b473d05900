"""Symbols of shared libraries (issue 14): .dynsym, IFUNC symbols, symbol versions.

glibc's libm.so.6 (Debian 12, the host's and the test rootfs's) exports `cos` as an IFUNC and
`hypot` twice: hypot@GLIBC_2.2.5 (old, hidden) and hypot@@GLIBC_2.35 (the default)."""
from loader.elf import load_elf
from loader.elf_symbols import symbols_from_rows
from loader.image import Segment

LIBM = "/lib/x86_64-linux-gnu/libm.so.6"
LIBZ = "/lib/x86_64-linux-gnu/libz.so.1"
SEGMENTS = (Segment(0x1000, 0x10000, 0x10000, 0, 5, b""),)


def test_ifunc_symbols_are_kept_with_their_kind():
    table = symbols_from_rows([("strlen", 0x2000, 16, 10, 1), ("puts", 0x3000, 8, 2, 1)], 0, SEGMENTS)
    assert table.lookup("strlen").kind == "ifunc" and table.lookup("puts").kind == "func"
    assert table.function_at(0x2004).name == "strlen"         # the resolver is code too


def test_default_version_wins_over_hidden_ones():
    rows = [("hypot", 0x2000, 16, 2, 1, True), ("hypot", 0x4000, 32, 2, 1, False),
            ("lgamma_old", 0x5000, 8, 2, 1, True)]
    table = symbols_from_rows(rows, 0, SEGMENTS)
    assert table.lookup("hypot").addr == 0x4000
    assert table.lookup("lgamma_old").addr == 0x5000          # no default: the hidden one stays


def test_public_name_of_aliases():
    rows = [("__libc_malloc", 0x2000, 16, 2, 1), ("malloc", 0x2000, 16, 2, 1)]
    assert symbols_from_rows(rows, 0, SEGMENTS).symbolize(0x2000) == "malloc"


def test_real_libm_relocated_where_it_is_mapped():
    with open(LIBM, "rb") as handle:
        image = load_elf(handle.read(), LIBM, pie_base=0x7FFF_F000_0000, shared_object=True)
    cos, hypot = image.symbols.lookup("cos"), image.symbols.lookup("hypot")
    assert cos.kind == "ifunc" and 0x7FFF_F000_0000 < cos.addr < 0x7FFF_F100_0000
    assert hypot.kind == "func" and image.symbols.function_at(hypot.addr).name == "hypot"


def test_unversioned_exports_keep_the_table():
    """libz exports its functions unversioned beside versioned ones: .gnu.version holds
    VER_NDX_GLOBAL for them, which pyelftools names as a string. That entry once raised
    inside the reader and left the whole table empty (Debian's perl, bash, sed, sqlite3,
    libz and every gconv module were profiled as module+offset)."""
    with open(LIBZ, "rb") as handle:
        image = load_elf(handle.read(), LIBZ, pie_base=0x7FFF_F000_0000, shared_object=True)
    deflate = image.symbols.lookup("deflate")
    assert image.symbols_problem is None
    assert deflate is not None and image.symbols.function_at(deflate.addr + 1).name == "deflate"
