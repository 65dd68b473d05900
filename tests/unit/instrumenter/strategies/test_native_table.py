"""The native keyed aggregation (instrumenter/strategies/native_table.py): the table part run
on the machine, hit by hit, computes per key what a Python model computes (count, sum, min,
max of the value word), whatever the keys and values, including when the table fills and the
hit traps into the drain (rows read, table zeroed, the thread back at the sequence's start,
as native_collector.py does); a hit leaves registers, status flags and the red zone as they
were.
"""
import struct
from types import SimpleNamespace

from hypothesis import given, settings, strategies as st
import pytest

from emu.exits import TRAP
from instrumenter.insn.decode import decode
from instrumenter.strategies.native import NativeSlot, NativeSpec, emit_part, fits, part_room
from instrumenter.strategies.native_guard import Arg, Compare, Const
from instrumenter.strategies.native_table import MAX_PROBES, TableSpec, read_rows
from tests.unit.emu.guest import ARCHES, CODE, DATA, STACK_SP, machine_with

AFTER = CODE + 0xC00
ARG_REGS = ("rdi", "rsi", "rdx", "rcx", "r8", "r9")
BITS = {"i386": 32, "x86_64": 64}
ALL = frozenset({"count", "sum", "min", "max"})


class GuestTable:
    """A machine running a table part: `hit(args)` runs one hit (draining when it traps),
    `result()` the table's rows merged with every drained one."""

    def __init__(self, arch: str, table: TableSpec, guard=None):
        self.arch, self.table = arch, table
        spec = NativeSpec("table", max(table.words, 1), guard=guard, table=table)
        self.slot = NativeSlot(SimpleNamespace(native=spec), CODE, counter=DATA, array=DATA)
        self.m = machine_with(arch)
        self.code = emit_part(self.slot, CODE, AFTER, arch)
        self.m.mem.write(CODE, self.code)
        self.m.mem.write(AFTER, b"\xcc")
        self.m.mem.write(STACK_SP - 128, bytes(range(128)) + bytes(range(128, 256)))
        self.merged: dict = {}
        self.drains = 0

    def _set_args(self, args) -> None:
        if self.arch == "x86_64":
            for reg, value in zip(ARG_REGS, args):
                self.m.set_reg(reg, value)
        else:
            self.m.mem.write(STACK_SP, struct.pack("<7I", 0xDEAD, *args))

    def _state(self):
        regs = self.m.registers()
        return regs.gpr, regs.flags & 0x8D5, self.m.mem.read(STACK_SP - 128, 256)

    def hit(self, args) -> None:
        self._set_args(args)
        before = self._state()
        start, _, trap = self.slot.sequence
        exit_ = self.m.run(CODE)
        while exit_.pc == CODE + trap + 1:          # the table is full: drain, restart
            self.drain()
            exit_ = self.m.run(CODE + start)
        assert exit_.kind == TRAP and exit_.pc == AFTER + 1, exit_
        assert self._state() == before

    def drain(self) -> None:
        self.drains += 1
        size = self.table.entries * 64
        for row in read_rows(self.m.mem.read(DATA, size), self.table, self.arch):
            _merge(self.merged, row.keys, (row.count, row.sum, row.min, row.max))
        self.m.mem.write(DATA, bytes(size))

    def result(self) -> dict:
        self.drain()
        return self.merged


def _merge(into: dict, key, row) -> None:
    old = into.get(key)
    into[key] = row if old is None else (old[0] + row[0], old[1] + row[1], min(old[2], row[2]),
                                         max(old[3], row[3]))


def model(table: TableSpec, stream) -> dict:
    found: dict = {}
    for args in stream:
        value = args[table.value] if table.value is not None else 0
        _merge(found, tuple(args[i] for i in table.keys), (1, value, value, value))
    return found


def _comparable(found: dict, table: TableSpec) -> dict:
    """Only what the part keeps: a count-only table has no sum, min or max."""
    keep = [True, "sum" in table.operations, "min" in table.operations, "max" in table.operations]
    return {key: tuple(v if k else None for v, k in zip(row, keep)) for key, row in found.items()}


def _words(arch: str):
    top = (1 << BITS[arch]) - 1
    return st.one_of(st.integers(0, 6), st.sampled_from([0, 1, top, top - 1, 1 << (BITS[arch] - 1)]),
                     st.integers(0, top))


TABLES = st.builds(lambda keys, value, ops, entries: TableSpec(keys, value, frozenset({"count", *ops}), entries),
                   st.lists(st.integers(0, 5), max_size=2).map(tuple),
                   st.one_of(st.none(), st.integers(0, 5)),
                   st.sets(st.sampled_from(["sum", "min", "max"])),
                   st.sampled_from([1, 2, 4, 8, 32]))


@pytest.mark.parametrize("arch", ARCHES)
def test_the_guest_table_equals_a_model_on_random_streams(arch):
    drained = []

    @settings(max_examples=60, deadline=None)
    @given(data=st.data(), table=TABLES)
    def check(data, table):
        if table.value is None:
            table = TableSpec(table.keys, None, frozenset({"count"}), table.entries)
        key_words = st.one_of(st.integers(0, 40), _words(arch))
        stream = data.draw(st.lists(st.tuples(*[key_words] * 6), max_size=60))
        guest = GuestTable(arch, table)
        for args in stream:
            guest.hit(args)
        assert _comparable(guest.result(), table) == _comparable(model(table, stream), table)
        drained.append(guest.drains > 1)             # result() drains once at the end
    check()
    assert any(drained) and not all(drained)         # full tables were met, and tables that never filled


@pytest.mark.parametrize("arch", ARCHES)
def test_a_full_table_drains_and_loses_nothing(arch):
    table = TableSpec((0,), 1, ALL, entries=4)
    guest = GuestTable(arch, table)
    stream = [(k, k * 3, 0, 0, 0, 0) for k in range(10)] * 2
    for args in stream:
        guest.hit(args)
    assert guest.drains >= 2
    assert guest.result() == model(table, stream)


@pytest.mark.parametrize("arch", ARCHES)
def test_a_long_cluster_drains_after_max_probes(arch):
    """More keys than MAX_PROBES in a table bigger than that: a drain happens no later than
    the table's fill, and the counts are still exact."""
    table = TableSpec((0,), None, frozenset({"count"}), entries=64)
    guest = GuestTable(arch, table)
    stream = [(k, 0, 0, 0, 0, 0) for k in range(200)]
    for args in stream:
        guest.hit(args)
    assert guest.drains >= 1 and MAX_PROBES < 64
    assert _comparable(guest.result(), table) == _comparable(model(table, stream), table)


@pytest.mark.parametrize("arch", ARCHES)
def test_a_guard_keeps_rejected_hits_out_of_the_table(arch):
    table = TableSpec((0,), None, frozenset({"count"}), entries=8)
    guest = GuestTable(arch, table, guard=Compare(">", Arg(0), Const(5)))
    stream = [(k % 9, 0, 0, 0, 0, 0) for k in range(40)]
    for args in stream:
        guest.hit(args)
    expected = model(table, [args for args in stream if args[0] > 5])
    assert _comparable(guest.result(), table) == _comparable(expected, table)


@pytest.mark.parametrize("arch", ARCHES)
def test_the_part_decodes_as_whole_instructions_and_fits_its_room(arch):
    table = TableSpec((0, 3), 5, ALL, entries=1024)
    spec = NativeSpec("table", 6, guard=Compare("<", Arg(2), Const(9)), table=table)
    assert fits(spec)
    slot = NativeSlot(SimpleNamespace(native=spec), CODE, counter=DATA, array=DATA)
    code = emit_part(slot, CODE, AFTER, arch)
    assert len(code) <= part_room(spec)
    at = 0
    while at < len(code):
        at += len(decode(code[at:], CODE + at, arch).raw)
    assert at == len(code)
