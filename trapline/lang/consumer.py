"""A consumer (US 7,350,196 FIG. 1; one `-e PROGRAM` or FILE.bt): its probes' compiled actions, its
own maps and its own output. Consumers of one run are independent: they may enable the same
probe, and one's exit() or error stops none of the others.

Output is written as it is made, in the order of the run (printf's lines between the guest's
own), so nothing waits in a buffer that could overflow; unless the program sets a buffer limit
(`config = { buffer_limit = N }`): then its events wait in a buffer drained on the virtual
clock's ticks, and what does not fit is counted and reported as bpftrace's lost events
(event_buffer.py). At the end (or at its exit()) the
consumer runs its END probes and prints its maps, as bpftrace does.

A run-time error in an action (division by zero, a string where a number goes) ends that
hit's action only: it is reported once, with the program's line and column and the probe, and
counted; the guest never notices.
"""
import sys
from dataclasses import fields, is_dataclass

from . import ast
from .checks import check, check_config
from .errors import RuntimeActionError, StopAction, caret_message
from .event_buffer import EventBuffer
from .evaluator import Compiler, Env
from .maps import Maps
from .parser import parse
from .values import truth


def assigned_maps(program) -> set[str]:
    """The names of the maps the program's blocks assign (each exists from the start in
    bpftrace: one never filled still prints, as an empty line)."""
    found, nodes = set(), [probe.body for probe in program.probes]
    while nodes:
        node = nodes.pop()
        if isinstance(node, list):
            nodes.extend(node)
        elif is_dataclass(node):
            if isinstance(node, ast.MapAssign):
                found.add(node.target.name)
            nodes.extend(getattr(node, f.name) for f in fields(node))
    return found


class Block:
    """One probe block of the program: its attach points, its predicate and its action."""
    __slots__ = ("attaches", "predicate", "action", "node")

    def __init__(self, attaches, predicate, action, node):
        self.attaches, self.predicate, self.action, self.node = attaches, predicate, action, node


class Consumer:
    def __init__(self, source: str, name: str, out, *, stacks, report=None, batch: int = 1):
        self.program = parse(source, name)
        attach_lists = check(self.program)
        self.buffer_limit = check_config(self.program).get("buffer_limit")
        self.events: EventBuffer | None = None      # made by start() when there is a limit
        self.name = name
        self.maps = Maps()
        for map_name in assigned_maps(self.program):
            self.maps.get(map_name)         # bpftrace prints every map of the program, even empty
        self.out = out
        self.batch = batch          # writes kept for one: 1 where the guest's output is the same file
        self.before_write = None    # native_printf.PrintDrain: captured lines go out first
        self._pending: list[str] = []
        self.stacks = stacks
        self.report = report or (lambda line: print(line, file=sys.stderr))
        self.start_ns = 0
        self.exited = False
        self.finished = False
        self.errors: dict[tuple, list] = {}           # (line, column, probe) -> [count, message]
        compiler = Compiler(self)
        self.blocks = [Block(attaches,
                             compiler.expr(probe.predicate) if probe.predicate is not None else None,
                             compiler.block(probe.body), probe)
                       for probe, attaches in zip(self.program.probes, attach_lists)]

    def start(self, start_ns: int, clock) -> None:
        """The run begins at virtual time `start_ns`; `clock` reads the virtual time (the door's)
        when an event is made."""
        self.start_ns = start_ns
        if self.buffer_limit is not None:
            self.events = EventBuffer(self.buffer_limit, start_ns, self._output)
            self.clock = clock

    def write(self, text: str) -> None:
        """An event (printf, print, time, join): into the buffer if there is a limit."""
        if self.before_write is not None:
            self.before_write()
        self.emit(text)

    def emit(self, text: str) -> None:
        """write() without asking for the captured lines first (those lines themselves)."""
        if self.events is not None:
            self.events.add(text, self.clock())
            return
        self._output(text)

    def _output(self, text: str) -> None:
        if self.batch == 1:
            self.out.write(text)
            self.out.flush()        # in order with the guest's own output (it writes to the fd)
            return
        pending = self._pending
        pending.append(text)
        if len(pending) >= self.batch:
            self.flush()

    def flush(self) -> None:
        """Write what a batching consumer keeps (its output is a file of its own: -o FILE)."""
        if self._pending:
            text, self._pending = "".join(self._pending), []
            self.out.write(text)
        self.out.flush()

    # ---- hits -------------------------------------------------------------------------------
    def fire(self, block: Block, hit) -> None:
        if self.exited:
            return
        env = Env(hit, self)
        try:
            if block.predicate is not None and not truth(block.predicate(env)):
                return
            block.action(env)
        except StopAction:
            self.finish(hit)
        except RuntimeActionError as error:
            self._failed(error, hit)

    def _failed(self, error: RuntimeActionError, hit) -> None:
        node = error.node
        key = (node.line, node.column, hit.probe)
        seen = self.errors.get(key)
        if seen is None:
            self.errors[key] = [1, error.message]
            self.report("trapline: " + caret_message(self.program.source, self.name, node.line,
                                                     node.column, f"{hit.probe}: {error.message} "
                                                     "(this hit's action stopped here)"))
        else:
            seen[0] += 1

    # ---- the end ----------------------------------------------------------------------------
    def exit(self) -> None:
        """exit(): this consumer stops here (END, then its maps); the others and the guest
        go on."""
        self.exited = True

    def finish(self, end_hit) -> None:
        """Run the END probes, print the maps, report the errors counted: once."""
        if self.finished:
            return
        self.finished = True
        self.exited = False
        events, self.events = self.events, None     # the run is over: the consumer drains all
        if events is not None:
            events.drain()
        for block in self.blocks:
            if any(a.kind == "END" for a in block.attaches):
                self.fire(block, end_hit)
        self.exited = True
        self.write(self.maps.text_at_exit())
        self.flush()
        if events is not None and events.lost:
            self.report(f"trapline: {self.name}: Lost {events.lost} events (its buffer keeps "
                        f"{events.limit} between drains, one drain a millisecond of virtual time)")
        for (line, column, probe), (count, message) in self.errors.items():
            if count > 1:
                self.report(f"trapline: {self.name}:{line}:{column}: {probe}: {message}: "
                            f"{count} hits in all")
