"""Keyed aggregations computed in the guest (instrumenter/strategies/native_table.py: a hash
table of integer keys in a guest page, updated by the trampoline part; a hit never leaves
the emulator).

A uprobe goes there when every block on it is one `@MAP[KEYS] = AGG(VALUE)` with
  KEYS   zero to two argument words (arg0..arg5), the same ones in every block;
  AGG    count(), sum(), avg(), min() or max();
  VALUE  an argument word, the same one in every block that takes a value;
and a predicate that a native guard decides (guards.py), the same in every block (or none).
The table keeps per key the hits, the sum, the min and the max of the value word; when the
session collects (process exit, exec, the end of the run, a full table's drain trap), each
entry is merged into each block's map, so the maps equal what the Python path (evaluator.py)
would compute from the same hits: count and sum add up, avg adds its count and total, min
and max keep the bound. Anything else (hist, a key that is not an argument, a consumer that
may exit()) stays with the stored-arguments path or Python (native.py).
"""
from instrumenter.strategies.native import NativeSpec, fits
from instrumenter.strategies.native_guard import Known
from instrumenter.strategies.native_table import DEFAULT_ENTRIES, TableSpec

from . import ast
from .aggregations import Avg, Count, Max, Min, Sum
from .checks import ARG
from .guards import predicate_guard

MAX_TABLE_ARGS = 6               # arg0..arg5: the words the guest parts read
TABLE_ENTRIES = DEFAULT_ENTRIES  # a table's entries (a power of two; the tests make it small)
_IN_TABLE = {"count": Count, "sum": Sum, "avg": Avg, "min": Min, "max": Max}
_NEEDS = {"count": (), "sum": ("sum",), "avg": ("sum",), "min": ("min",), "max": ("max",)}


def _arg_index(node) -> int | None:
    if not isinstance(node, ast.Builtin):
        return None
    found = ARG.match(node.name)
    return int(found.group(1)) if found and int(found.group(1)) < MAX_TABLE_ARGS else None


def keyed_aggregation(block):
    """(map name, key indices, aggregation name, value index) if the block is one
    `@MAP[argI, argJ] = AGG(argK)` the table computes, else None."""
    node = block.node
    if len(node.body) != 1 or not all(a.kind == "uprobe" for a in block.attaches):
        return None
    statement = node.body[0]
    if not isinstance(statement, ast.MapAssign) or statement.op != "=" or len(statement.target.keys) > 2:
        return None
    value = statement.value
    if not (isinstance(value, ast.Call) and value.name in _IN_TABLE):
        return None
    keys = tuple(_arg_index(k) for k in statement.target.keys)
    if None in keys:
        return None
    if value.name == "count":
        return (statement.target.name, keys, "count", None) if not value.args else None
    if len(value.args) != 1 or _arg_index(value.args[0]) is None:
        return None
    return statement.target.name, keys, value.name, _arg_index(value.args[0])


def table_spec(handlers) -> TableSpec | None:
    """The table every block on a probe shares, or None."""
    plans = [keyed_aggregation(block) for _, block, _ in handlers]
    if not plans or None in plans:
        return None
    keys = {plan[1] for plan in plans}
    values = {plan[3] for plan in plans if plan[3] is not None}
    if len(keys) != 1 or len(values) > 1:
        return None
    operations = {"count"} | {need for plan in plans for need in _NEEDS[plan[2]]}
    return TableSpec(keys.pop(), values.pop() if values else None, frozenset(operations),
                     entries=TABLE_ENTRIES)


def go_native_table(probe, handlers, may_exit) -> bool:
    """Make `probe` aggregate in a guest table if its blocks allow (module docstring)."""
    table = table_spec(handlers)
    if table is None or any(may_exit(consumer) for consumer, _, _ in handlers):
        return False
    guards = {predicate_guard(block) for _, block, _ in handlers}
    if len(guards) != 1 or None in guards:
        return False
    guard = guards.pop()
    spec = NativeSpec("table", max(table.words, 1), guard=None if guard == Known(True) else guard,
                      table=table)
    if not fits(spec):
        return False
    probe.native, probe.action = spec, None
    return True


def merge_entry(handlers, words: tuple) -> None:
    """One table entry, (keys..., count, sum, min, max), into each block's map."""
    count, total, low, high = words[-4:]
    keys = tuple(words[:-4])
    for consumer, block, _ in handlers:
        name, _, kind, _ = keyed_aggregation(block)
        values = consumer.maps.get(name).values
        found = values.get(keys)
        if found is None:
            found = values[keys] = _IN_TABLE[kind]()
        _merge(found, count, total, low, high)


def _merge(found, count: int, total: int, low: int, high: int) -> None:
    if isinstance(found, Avg):
        found.count += count
        found.total += total
    elif isinstance(found, Min):
        bound = low if not isinstance(found, Max) else high
        found.add(bound)
    elif isinstance(found, Sum):
        found.value += total
    else:
        found.value += count
