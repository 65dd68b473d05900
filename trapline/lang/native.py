"""The hot path compiled into the guest: a uprobe whose every block is `@NAME = count();`
(no predicate, no key) counts in the guest (the jump strategy's native count action,
instrumenter/strategies/native.py: no trap and no Python per hit); the count is added to each
block's map when the session collects, at the end of the run. Any other block on the same site
keeps the site on the Python path, where every hit runs the compiled actions (evaluator.py).
"""
from . import ast
from .aggregations import Count


def counted_map(block) -> str | None:
    """The map a block does nothing but count into, None if it does anything else."""
    node = block.node
    if node.predicate is not None or len(node.body) != 1:
        return None
    statement = node.body[0]
    if not isinstance(statement, ast.MapAssign) or statement.op != "=" or statement.target.keys:
        return None
    value = statement.value
    if not (isinstance(value, ast.Call) and value.name == "count" and not value.args):
        return None
    if not all(a.kind == "uprobe" for a in block.attaches):
        return None
    return statement.target.name


def go_native(probe, handlers) -> bool:
    """Make `probe` count in the guest if every block on it only counts (probes.py)."""
    if not handlers or any(counted_map(block) is None for _, block, _ in handlers):
        return False
    probe.native, probe.action = "count", None
    return True


def add_native_counts(probe, handlers) -> None:
    """After the session collected: each block's map gets the probe's hits."""
    for consumer, block, _ in handlers:
        if probe.hits:
            values = consumer.maps.get(counted_map(block)).values
            counted = values.get(())
            if counted is None:
                counted = values[()] = Count()
            counted.value += probe.hits
