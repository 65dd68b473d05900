"""The hot paths kept in the guest (the jump strategy's native actions, instrumenter/strategies/
native.py: no trap and no Python per hit):

- a uprobe whose every block is `@NAME = count();` (no predicate, no key) counts in the guest;
  the count is added to each block's map when the session collects, at the end of the run;
  so does one whose blocks all count under the same integer predicate on its arguments
  (`/arg0 > 100 && arg1 != 0/`): the predicate is compiled in front of the count (a native
  guard, guards.py), so a rejected hit costs a few guest instructions;
- a uprobe whose every block computes only from its arguments and pid (predicates, keys and
  values of integer arithmetic on argN: `/arg0 > 100/ { @[arg0] = sum(arg1); @h = hist(arg2); }`)
  has its argument words stored in the guest (native "args:N": a buffer drained in batches,
  never a record lost), and its blocks run on each stored hit when the session collects
  (ArgumentRecords): the results are the same, the hits never trap. When every block's
  predicate is a guard, their disjunction runs in the guest first and only the hits it
  accepts are stored (each block still checks its own predicate on them). Not for a consumer that
  may exit() (its hits would be evaluated after its exit), nor for a block that prints.

Any other block on the same site keeps the site on the Python path, where every hit runs the
compiled actions as it happens (evaluator.py).
"""
from instrumenter.strategies.native import NativeSpec, fits
from instrumenter.strategies.native_guard import Known, any_of

from . import ast
from .checks import ARG
from .aggregations import AGGREGATIONS, Count
from .guards import predicate_guard


def counted_map(block) -> str | None:
    """The map a block does nothing but count into, None if it does anything else (a
    predicate included)."""
    return None if block.node.predicate is not None else counts_into(block)


def counts_into(block) -> str | None:
    """The map a block's actions do nothing but count into, whatever its predicate."""
    node = block.node
    if len(node.body) != 1:
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


def go_native_guarded(probe, handlers) -> bool:
    """Make `probe` count in the guest behind a guard if every block on it only counts, under
    one and the same predicate that a guard decides."""
    if not handlers or any(counts_into(block) is None for _, block, _ in handlers):
        return False
    guards = {predicate_guard(block) for _, block, _ in handlers}
    if len(guards) != 1 or None in guards:
        return False
    spec = NativeSpec("count", guard=guards.pop())
    if not fits(spec):
        return False
    probe.native, probe.action = spec, None
    return True


def add_native_counts(probe, handlers) -> None:
    """After the session collected: each block's map gets the probe's hits."""
    for consumer, block, _ in handlers:
        if probe.hits:
            values = consumer.maps.get(counts_into(block)).values
            counted = values.get(())
            if counted is None:
                counted = values[()] = Count()
            counted.value += probe.hits


MAX_ARGS = 6                  # the native args action stores at most six words (psABI registers)
_PLAIN_NODES = (ast.Integer, ast.Unary, ast.Binary, ast.Ternary, ast.Var)


def argument_words(block) -> int | None:
    """How many argument words a block needs if it computes only from them (and pid): then
    it can run from records the guest stored; None otherwise."""
    if not all(a.kind == "uprobe" for a in block.attaches):
        return None
    needed = [0]
    nodes = [block.node.predicate] if block.node.predicate is not None else []
    for statement in block.node.body:
        if isinstance(statement, ast.MapAssign):
            nodes += statement.target.keys
            value = statement.value
            nodes += value.args if isinstance(value, ast.Call) and value.name in AGGREGATIONS else [value]
        elif isinstance(statement, ast.VarAssign):
            nodes.append(statement.value)
        else:
            return None                     # if/while/printf...: the Python path
    return needed[0] if all(_from_arguments(node, needed) for node in nodes) else None


def _from_arguments(node, needed: list) -> bool:
    if isinstance(node, ast.Builtin):
        found = ARG.match(node.name)
        if found and int(found.group(1)) < MAX_ARGS:
            needed[0] = max(needed[0], int(found.group(1)) + 1)
            return True
        return node.name == "pid"
    if not isinstance(node, _PLAIN_NODES):
        return False
    children = [getattr(node, name) for name in ("operand", "left", "right", "condition", "then", "otherwise")
                if hasattr(node, name)]
    return all(_from_arguments(child, needed) for child in children)


def may_exit(consumer) -> bool:
    return "exit(" in consumer.program.source.replace(" ", "")


def go_native_arguments(probe, handlers) -> bool:
    """Store `probe`'s argument words in the guest if every block on it can run from them."""
    words = [argument_words(block) for _, block, _ in handlers]
    if not handlers or None in words or any(may_exit(consumer) for consumer, _, _ in handlers):
        return False
    nargs = max(max(words), 1)
    guards = [predicate_guard(block) for _, block, _ in handlers]
    guard = None if None in guards else any_of(guards)
    spec = NativeSpec("args", nargs, guard=guard)
    if guard is None or guard == Known(True) or not fits(spec):
        spec = f"args:{nargs}"
    probe.native, probe.action = spec, None
    return True


class RecordHit:
    """A hit rebuilt from a record the guest stored: its pid and argument words (the guest
    code knows no thread: tid 0)."""
    __slots__ = ("pid", "tid", "probe", "func", "_args", "retval", "thread", "process")

    def __init__(self, pid: int, args: tuple, probe: str, func: str):
        self.pid, self.tid, self._args, self.probe, self.func = pid, 0, args, probe, func
        self.retval = self.thread = self.process = None

    def arg(self, index: int) -> int:
        return self._args[index]


class ArgumentRecords:
    """The session's record buffers: the rows the guests' native args actions stored go to the
    blocks of their probe; every other row is dropped (the consumers' actions are the output)."""

    put_block = None        # rows one by one: the collector has no block of lines to give here

    def __init__(self):
        self.routes: dict[str, tuple] = {}       # probe spec text -> (handlers, func)
        self.tables: set[str] = set()            # those aggregating in a guest table (native_table.py)
        self.printers: dict = {}                 # text -> CapturedPrints (native_printf.py)
        self.printing: set[int] = set()          # ids of those probes (PrintDrain drains them)
        self.start_printing = None               # the runner's: install the drain, once
        self.by_pid: dict = {}                   # native drops per pid (native_collector.py)
        self.capacity, self.drain = 1, None

    def route(self, probe, handlers, func: str, *, table: bool = False, printing: bool = False) -> None:
        self.routes[probe.spec.text] = (handlers, func)
        if table:
            self.tables.add(probe.spec.text)
        if printing:
            from .native_printf import CapturedPrints
            self.printers[probe.spec.text] = CapturedPrints(handlers)
            self.printing.add(id(probe))
            if self.start_printing is not None:
                self.start_printing()

    def put(self, row) -> None:
        route = self.routes.get(row[3])
        if route is None:
            return
        handlers, func = route
        if row[7] == "table":                    # an entry of a guest table, not a hit
            from .native_table import merge_entry
            merge_entry(handlers, row[5])
            return
        printer = self.printers.get(row[3]) if self.printers else None
        if printer is not None:                  # a captured printf (native_printf.py)
            printer.put(row[5], lambda: RecordHit(row[1], row[5], row[3], func))
            return
        hit = RecordHit(row[1], row[5], row[3], func)
        for consumer, block, _ in handlers:
            consumer.fire(block, hit)

    def flush(self) -> None:
        pass

    def dropped(self) -> dict:
        return {pid: b.dropped for pid, b in sorted(self.by_pid.items()) if b.dropped}
