"""SymbolTable: lookup by name, function bounds, address -> "name+offset"."""
from __future__ import annotations

import pytest

from loader.elf import load_elf
from loader.symbols import Symbol
from loader.symbols import SymbolTable
from tests.unit.loader.elf_builder import CODE_OFFSET, STB_GLOBAL, STB_LOCAL, STB_WEAK, STT_FUNC, build_elf


def _table() -> SymbolTable:
    return SymbolTable([
        Symbol("main", 0x1000, 0x40, "func"),
        Symbol("fib", 0x1040, 0x30, "func"),
        Symbol("empty", 0x1070, 0, "func"),
        Symbol("after_gap", 0x1100, 0x10, "func"),
        Symbol("counter", 0x2000, 8, "object"),
    ])


def test_lookup_by_name():
    table = _table()
    assert table.lookup("fib") == Symbol("fib", 0x1040, 0x30, "func")
    assert table.lookup("counter").kind == "object"
    assert table.lookup("nope") is None


@pytest.mark.parametrize("addr, name", [
    (0x1000, "main"), (0x103F, "main"), (0x1040, "fib"), (0x106F, "fib"),
    (0x1070, None), (0x10FF, None), (0x1100, "after_gap"), (0x1110, None), (0xFFF, None), (0x2000, None),
])
def test_function_at_uses_half_open_bounds(addr, name):
    found = _table().function_at(addr)
    assert (found.name if found else None) == name


@pytest.mark.parametrize("addr, text", [
    (0x1040, "fib"), (0x1052, "fib+0x12"), (0x103F, "main+0x3f"), (0x2004, "counter+0x4"),
    (0x1070, "0x1070"), (0x401234, "0x401234"),
])
def test_symbolize(addr, text):
    assert _table().symbolize(addr) == text


def test_functions_are_sorted_and_exclude_objects():
    table = SymbolTable(reversed(list(_table())))
    assert [sym.name for sym in table.functions()] == ["main", "fib", "empty", "after_gap"]
    assert [sym.name for sym in table.objects()] == ["counter"]
    assert len(table) == 5


def test_nested_function_resolves_to_the_innermost():
    table = SymbolTable([Symbol("outer", 0x1000, 0x100, "func"), Symbol("inner", 0x1010, 0x10, "func")])
    assert table.function_at(0x1015).name == "inner"
    assert table.function_at(0x1025).name == "outer"   # past inner, still inside outer
    assert table.symbolize(0x10FF) == "outer+0xff"


def test_aliases_the_first_given_wins():
    table = SymbolTable([Symbol("exit", 0x1000, 0x10, "func"), Symbol("_exit_alias", 0x1000, 0x10, "func")])
    assert table.function_at(0x1004).name == "exit"
    assert table.lookup("_exit_alias").addr == 0x1000


def test_empty_table():
    table = SymbolTable()
    assert table.function_at(0x1000) is None and table.symbolize(0x10) == "0x10" and table.functions() == ()


@pytest.mark.parametrize("bits", [32, 64])
def test_symbols_read_from_elf(bits):
    built = build_elf(bits)
    table = load_elf(built.bytes()).symbols
    code = built.code_vaddr
    assert table.lookup("fib") == Symbol("fib", code + 0x10, 0x30, "func")
    assert table.lookup("helper") == Symbol("helper", code + 0x40, 0x08, "func")  # local symbols count too
    assert table.lookup("counter") == Symbol("counter", built.data_vaddr, 4, "object")
    assert table.symbolize(code + 0x22) == "fib+0x12"
    assert table.function_at(code + 0x44).name == "helper"


def test_global_name_wins_over_weak_and_local_alias():
    functions = (("zz_local", 0x00, 0x10, STT_FUNC, STB_LOCAL), ("aa_weak", 0x00, 0x10, STT_FUNC, STB_WEAK),
                 ("mid_global", 0x00, 0x10, STT_FUNC, STB_GLOBAL))
    table = load_elf(build_elf(64, functions=functions).bytes()).symbols
    assert table.function_at(0x400000 + CODE_OFFSET).name == "mid_global"
    assert {sym.name for sym in table.functions()} == {"zz_local", "aa_weak", "mid_global"}


def test_symbols_outside_the_image_are_dropped():
    functions = (("fib", 0x10, 0x30, STT_FUNC, STB_GLOBAL), ("ghost", 0x100000, 0x10, STT_FUNC, STB_GLOBAL))
    table = load_elf(build_elf(64, functions=functions).bytes()).symbols
    assert table.lookup("fib") is not None and table.lookup("ghost") is None


def test_stripped_file_has_an_empty_table():
    image = load_elf(build_elf(64, with_symbols=False).bytes())
    assert len(image.symbols) == 0 and image.symbols.symbolize(image.entry) == f"{image.entry:#x}"
