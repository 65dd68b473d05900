"""Keyed aggregations computed in a guest table (native_table.py) print the maps the Python
path prints: random programs of `@MAP[keys] = count/sum/avg/min/max(value)` blocks (one key
set and one value word, as the table requires) and random argument streams, the table part
run on the machine (draining when full) and its rows merged into one consumer's maps, against
another consumer whose blocks the evaluator runs on every hit."""
from hypothesis import given, settings, strategies as st
import pytest

from instrumenter.strategies.native_table import TableSpec
from trapline.lang.native_table import merge_entry, table_spec
from tests.unit.emu.guest import ARCHES
from tests.unit.instrumenter.strategies.test_native_table import GuestTable
from tests.unit.trapline.lang.fake_hit import FakeHit, consumer

AGGREGATIONS = ("count", "sum", "avg", "min", "max")


def argument_words(top: int):
    """Six argument words: small ones repeat (keys met again), any word of the arch's size."""
    return st.tuples(*[st.one_of(st.integers(0, 30), st.integers(0, top))] * 6)


def _program(keys: tuple, value: int, kinds: list) -> str:
    key = f"[{', '.join(f'arg{k}' for k in keys)}]" if keys else ""
    blocks = []
    for i, kind in enumerate(kinds):
        argument = "" if kind == "count" else f"arg{value}"
        blocks.append(f"uprobe:/p:f {{ @m{i}{key} = {kind}({argument}); }}")
    return " ".join(blocks)


def _handlers(made):
    return [(made, block, "f") for block in made.blocks]


@pytest.mark.parametrize("arch", ARCHES)
def test_maps_from_the_guest_table_equal_the_python_paths(arch):
    drained = []
    top = (1 << (64 if arch == "x86_64" else 32)) - 1

    @settings(max_examples=50, deadline=None)
    @given(keys=st.lists(st.integers(0, 5), max_size=2).map(tuple), value=st.integers(0, 5),
           kinds=st.lists(st.sampled_from(AGGREGATIONS), min_size=1, max_size=4),
           entries=st.sampled_from([1, 2, 8, 64]),
           stream=st.one_of(st.lists(argument_words(top), max_size=8),
                            st.lists(argument_words(top), min_size=10, max_size=50)))
    def check(keys, value, kinds, entries, stream):
        text = _program(keys, value, kinds)
        guest_side, _, _ = consumer(text)
        python_side, _, reports = consumer(text)
        table = table_spec(_handlers(guest_side))
        assert table is not None, text
        table = TableSpec(table.keys, table.value, table.operations, entries)
        guest = GuestTable(arch, table)
        for args in stream:
            guest.hit(args)
            for block in python_side.blocks:
                python_side.fire(block, FakeHit(args=args))
        for key, (count, total, low, high) in guest.result().items():
            merge_entry(_handlers(guest_side), (*key, count, total, low, high))
        assert not reports
        assert guest_side.maps.text_at_exit() == python_side.maps.text_at_exit()
        drained.append(guest.drains > 1)
    check()
    assert any(drained) and not all(drained)
