"""printf captured in the guest: a uprobe whose every block is printf()s of argument words and
integer constants (`printf("%d %x\\n", arg0, arg2)`), under no predicate or one a native
guard decides (guards.py), has its argument words stored in the guest (the native args
action: a buffer drained in batches) and its lines formatted in Python from the stored
words, a batch at a time: the hit itself never leaves the emulator.

The lines come out byte for byte as the Python path writes them (the same compiled format,
printf.py, on the same words) and in the same order relative to everything else written:
the buffer is drained (PrintDrain) before any other output of any consumer, at every system
call's entry (the guest's own output goes through one), whenever a thread leaves the CPU
(the door's on_switch_out: another process's records are in another buffer, so each is
drained before the next one runs), and at exits, execs, forks and the end of the run (the
native collector's own collections). At most one such site is captured in a run: records
of two sites sit in two buffers whose relative order a drain cannot know, so a second
printing site stays on the Python path (its lines drain the first's buffer before they
are written).

Not captured: %s and %c conversions, str(), any other built-in (pid, comm, retval...), a
consumer that may exit() (its hits would be formatted after its exit) or that sets a
buffer_limit (its events are timed when they are made: event_buffer.py).
"""
from instrumenter.strategies.native import NativeSpec, fits
from instrumenter.strategies.native_guard import Known, any_of

from . import ast
from .checks import ARG
from .guards import predicate_guard
from .printf import compile_format, conversions

MAX_PRINT_ARGS = 6                    # arg0..arg5: the words the native args action stores
_INTEGER_KINDS = frozenset("diuxXop")


def _operand(node):
    """("arg", index) or ("const", value), or None."""
    if isinstance(node, ast.Builtin):
        found = ARG.match(node.name)
        if found and int(found.group(1)) < MAX_PRINT_ARGS:
            return "arg", int(found.group(1))
        return None
    if isinstance(node, ast.Integer):
        return "const", node.value
    return None


def printf_line(statement):
    """(format, operands) if the statement is a printf of integer conversions whose arguments
    are argument words or integer literals, else None."""
    if not (isinstance(statement, ast.ExprStatement) and isinstance(statement.expr, ast.Call)
            and statement.expr.name == "printf" and statement.expr.args
            and isinstance(statement.expr.args[0], ast.String)):
        return None
    fmt = statement.expr.args[0].value
    if not set(conversions(fmt)) <= _INTEGER_KINDS:      # (the checks made sure it parses)
        return None
    operands = [_operand(node) for node in statement.expr.args[1:]]
    return None if None in operands else (fmt, operands)


def printing_block(block):
    """The block's printf lines if it is made of nothing else (module docstring), else None."""
    if not block.node.body or not all(a.kind == "uprobe" for a in block.attaches):
        return None
    lines = [printf_line(statement) for statement in block.node.body]
    return None if None in lines else lines


def go_native_printf(probe, handlers, may_exit) -> bool:
    """Capture `probe`'s printf arguments in the guest if its blocks allow (module docstring)."""
    plans = [printing_block(block) for _, block, _ in handlers]
    if not handlers or None in plans or any(may_exit(consumer) or consumer.buffer_limit is not None
                                            for consumer, _, _ in handlers):
        return False
    guards = [predicate_guard(block) for _, block, _ in handlers]
    if None in guards:
        return False
    words = max([index + 1 for lines in plans for _, operands in lines
                 for kind, index in operands if kind == "arg"] + [1])
    guard = any_of(guards)
    spec = NativeSpec("args", words, guard=guard)
    if guard == Known(True) or not fits(spec):
        spec = f"args:{words}"           # every hit stored; each block decides its predicate
    probe.native, probe.action = spec, None
    return True


class CapturedPrints:
    """The compiled lines of one captured site, written from its stored records."""

    def __init__(self, handlers):
        self.drain = None                 # the run's PrintDrain: held while a record is written
        self.writers = []                 # (consumer, block, [line(words) -> text])
        for consumer, block, _ in handlers:
            lines = [_line(compile_format(fmt), operands) for fmt, operands in printing_block(block)]
            self.writers.append((consumer, block, lines))
        # the common case at once: no predicate to decide, one line of one consumer
        only = self.writers[0] if len(self.writers) == 1 else None
        self.single = (only[0].emit, only[2][0]) if only and only[1].predicate is None \
            and len(only[2]) == 1 else None

    def put(self, words: tuple, make_hit) -> None:
        """One stored hit: each block's lines, as the evaluator would write them (a block with
        a predicate is run by its consumer on make_hit(), deciding it as the Python path)."""
        drain = self.drain
        held = drain is not None and not drain.draining
        if held:                          # (a full buffer's trap: no drain inside this one)
            drain.draining = True
        try:
            single = self.single
            if single is not None and not single[0].__self__.exited:
                single[0](single[1](words))
                return
            for consumer, block, lines in self.writers:
                if block.predicate is not None or consumer.exited:
                    consumer.fire(block, make_hit())
                    continue
                for line in lines:
                    consumer.emit(line(words))
        finally:
            if held:
                drain.draining = False


def _line(formatted, operands):
    """words -> the line: the format on the operands (argument words or constants)."""
    if len(operands) == 1 and operands[0][0] == "arg":
        index = operands[0][1]
        return lambda words: formatted((words[index],))
    return lambda words: formatted([words[x] if kind == "arg" else x for kind, x in operands])


class PrintDrain:
    """Drains the captured site's buffer before anything else is written (module docstring):
    a syscall watcher, the door's switch-out listener, and each consumer's before_write."""
    syscall_names = None                  # every call (events.py syscall_watchers_of)

    def __init__(self, session, probes: set):
        self.session, self.probes = session, probes        # ids of the captured probes
        self.draining = False

    def __call__(self, _thread=None) -> None:
        if self.draining:
            return
        jumps = self.session.strategies.if_built("jump")
        if jumps is None:
            return
        self.draining = True
        try:
            jumps.natives.collect_probes(self.probes)
        finally:
            self.draining = False

    def syscall_entry(self, thread, name, args) -> None:
        self(thread)

    def syscall_exit(self, thread, name, args, result) -> None:
        pass
