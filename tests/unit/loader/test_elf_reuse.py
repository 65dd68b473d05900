"""load_elf reads only what an exec needs: symbols when asked for, and a file seen before not again."""
from __future__ import annotations

import subprocess
import sys

import pytest

from loader.elf import forget_loaded_images, load_elf
from tests.unit.loader.elf_builder import build_elf


@pytest.fixture(autouse=True)
def _no_images_kept():
    forget_loaded_images()
    yield
    forget_loaded_images()


def test_importing_the_loader_imports_no_elf_library():
    code = "import sys, loader.elf, loader.stack; print(sorted(m for m in sys.modules if m.split('.')[0] in ('elftools', 'lief')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_symbols_are_read_when_first_asked_for():
    image = load_elf(build_elf(64).bytes())
    reader = image.symbol_reader
    assert reader._table is None                      # nothing read at load
    fib = image.symbols.lookup("fib")
    assert fib is not None and image.symbols is reader._table
    assert image.symbols_problem is None


def test_the_same_bytes_give_the_same_image_even_as_another_object():
    data = build_elf(64).bytes()
    first = load_elf(data, path="a")
    again = load_elf(bytes(bytearray(data)), path="a")
    assert again is first
    renamed = load_elf(bytes(bytearray(data)), path="b")
    assert renamed.path == "b" and renamed.segments is first.segments
    assert renamed.symbol_reader is first.symbol_reader   # symbols are read once per file


def test_another_pie_base_gives_another_image():
    pie = build_elf(64, etype=3).bytes()
    assert load_elf(pie).load_bias != load_elf(pie, pie_base=0x7F0000000000).load_bias == 0x7F0000000000


def test_a_middle_byte_difference_is_never_a_cache_hit():
    built = build_elf(64)
    image = load_elf(built.bytes())
    data_offset = image.segments[1].offset
    built.data[data_offset] ^= 0xFF                       # inside the data segment, far from head and tail
    changed = load_elf(built.bytes())
    assert changed is not image
    assert changed.segments[1].data[0] == image.segments[1].data[0] ^ 0xFF


def test_a_malformed_symbol_table_leaves_the_file_runnable_with_a_reason():
    built = build_elf(64)
    data = bytearray(built.bytes())
    shoff = int.from_bytes(data[0x28:0x30], "little")
    data[shoff:] = b"\xff" * (len(data) - shoff)        # section headers are garbage
    image = load_elf(bytes(data))
    assert image.segments and len(image.symbols) == 0
    problem = image.symbols_problem
    assert problem and "\n" not in problem and problem.startswith("unreadable symbol table")
