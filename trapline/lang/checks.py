"""Semantic checks before the run: every name known, every call with the arguments it takes,
each map used one way, each built-in where its probe has it. An error stops the program before
the guest starts, with the line, the column and a caret (errors.py), as bpftrace's semantic
analyser does (src/ast/passes/semantic_analyser.cpp).
"""
import re

from . import ast
from .aggregations import AGGREGATION_ARITY
from .attach import Attach, AttachError, parse_attach
from .errors import ProgramError
from .printf import FormatError, conversions

BUILTINS = {"pid", "tid", "comm", "uid", "gid", "cpu", "nsecs", "elapsed", "retval", "func",
            "probe", "ustack", "args"}
ARG = re.compile(r"arg(\d+)$")
# what the sandbox cannot give, and why (bpftrace has them for the kernel's side)
REFUSED = {
    "curtask": "curtask is the kernel's task_struct: the sandbox models the kernel in Python and "
               "has no kernel memory to point at",
    "kstack": "kstack: there are no kernel stacks in the sandbox (the kernel is modeled in Python)",
    "cgroup": "cgroup: the sandbox models no cgroups",
    "system": "system() would run a command on the host from inside a probe: refused (the "
              "sandbox never runs host commands for the guest)",
    "ksym": "ksym: the sandbox has no kernel symbols",
    "kaddr": "kaddr: the sandbox has no kernel symbols",
    "cat": "cat() would read a host file from a probe: refused",
    "signal": "signal() from a probe is not supported yet (use the guest's own kill)",
    "override": "override() changes a kernel function's return: there are none to change",
}
# function -> (least, most) arguments; the aggregations are apart (they are map values only)
FUNCTIONS = {"printf": (1, 64), "print": (1, 3), "str": (1, 2), "buf": (2, 2), "usym": (1, 1),
             "uaddr": (1, 1), "join": (1, 2), "exit": (0, 0), "clear": (1, 1), "delete": (1, 2),
             "zero": (1, 1), "time": (0, 1), "ustack": (0, 1)}
STATEMENT_ONLY = {"printf", "print", "join", "exit", "clear", "delete", "zero", "time"}
RETURN_KINDS = ("uretprobe",)


# the config block's keys trapline knows (bpftrace refuses an unknown key too)
CONFIG_KEYS = {"buffer_limit": "the events the consumer's buffer keeps between two drains "
                               "(event_buffer.py)"}


def check_config(program: ast.Program) -> dict:
    """The `config = { ... }` block's settings; ProgramError at the first thing wrong."""
    settings = {}
    for item in program.config:
        where = (program.source, program.name, item.line, item.column)
        if item.key not in CONFIG_KEYS:
            raise ProgramError(*where, f"unknown config key {item.key!r} (trapline knows: "
                                       f"{', '.join(CONFIG_KEYS)})")
        if item.key in settings:
            raise ProgramError(*where, f"{item.key} is set twice")
        if not isinstance(item.value, int) or item.value < 1:
            raise ProgramError(*where, f"{item.key} is a number of events, at least 1")
        settings[item.key] = item.value
    return settings


def check(program: ast.Program) -> list[list[Attach]]:
    """The attach points of each probe, parsed; ProgramError at the first thing wrong."""
    checker = _Checker(program)
    return [checker.probe(probe) for probe in program.probes]


class _Checker:
    def __init__(self, program: ast.Program):
        self.program = program
        self.map_kinds: dict[str, tuple[str, ast.Node]] = {}     # name -> ("hist"|"value"..., where)
        self.map_arity: dict[str, int] = {}
        self.key_kinds: dict[tuple, tuple] = {}        # (map, part) -> ("integer"|"string", where)

    def fail(self, node, message: str):
        raise ProgramError(self.program.source, self.program.name, node.line, node.column, message)

    def probe(self, probe: ast.Probe) -> list[Attach]:
        attaches = []
        for point in probe.attach_points:
            try:
                attaches.append(parse_attach(point.text))
            except AttachError as bad:
                self.fail(point, str(bad))
        self.kinds = {a.kind for a in attaches}
        self.attaches = attaches
        self.locals: set[str] = set()
        if probe.predicate is not None:
            self.expr(probe.predicate)
        self.statements(probe.body)
        return attaches

    # ---- statements -------------------------------------------------------------------------
    def statements(self, body: list) -> None:
        for statement in body:
            self.statement(statement)

    def statement(self, node) -> None:
        if isinstance(node, ast.MapAssign):
            self.map_assign(node)
        elif isinstance(node, ast.VarAssign):
            if node.op != "=" and node.name not in self.locals:
                self.fail(node, f"undefined variable {node.name}")
            self.expr(node.value)
            self.locals.add(node.name)
        elif isinstance(node, ast.ExprStatement):
            self.expr(node.expr, statement=True)
        elif isinstance(node, ast.If):
            self.expr(node.condition)
            self.statements(node.then)
            self.statements(node.otherwise)
        elif isinstance(node, ast.Unroll):
            if not isinstance(node.count, ast.Integer) or not 1 <= node.count.value <= 100:
                self.fail(node.count, "unroll takes an integer literal from 1 to 100")
            self.statements(node.body)
        elif isinstance(node, ast.While):
            self.expr(node.condition)
            self.statements(node.body)

    def map_assign(self, node: ast.MapAssign) -> None:
        value = node.value
        aggregation = isinstance(value, ast.Call) and value.name in AGGREGATION_ARITY
        if aggregation:
            if node.op != "=":
                self.fail(value, f"{value.name}() is assigned with '=', not '{node.op}'")
            self.aggregation(value)
            kind = value.name
        else:
            self.expr(value)
            kind = "value"
        self.map_ref(node.target)
        seen = self.map_kinds.get(node.target.name)
        if seen is not None and seen[0] not in (kind, "any"):
            self.fail(node, f"{node.target.name} holds {_kind_text(seen[0])} (line {seen[1].line}) "
                            f"and cannot hold {_kind_text(kind)} too")
        if seen is None or seen[0] == "any":
            self.map_kinds[node.target.name] = (kind, node)

    def aggregation(self, call: ast.Call) -> None:
        arity = AGGREGATION_ARITY[call.name]
        if len(call.args) != arity:
            self.fail(call, f"{call.name}() takes {arity} argument{'s' * (arity != 1)}, "
                            f"not {len(call.args)}")
        for arg in call.args:
            self.expr(arg)
        if call.name == "lhist":
            bounds = call.args[1:]
            if not all(isinstance(b, ast.Integer) for b in bounds):
                self.fail(call, "lhist(value, min, max, step): min, max and step are integer literals")
            low, high, step = (b.value for b in bounds)
            if step <= 0 or high <= low:
                self.fail(call, "lhist(value, min, max, step) needs min < max and step > 0")

    def map_ref(self, node: ast.MapRef) -> None:
        for key in node.keys:
            self.expr(key)
        arity = self.map_arity.setdefault(node.name, len(node.keys))
        if arity != len(node.keys):
            self.fail(node, f"{node.name} has keys of {arity} part{'s' * (arity != 1)} "
                            f"elsewhere, {len(node.keys)} here")
        for index, key in enumerate(node.keys):
            kind = value_kind(key)
            if kind is None:
                continue
            seen = self.key_kinds.setdefault((node.name, index), (kind, key))
            if seen[0] != kind:
                self.fail(key, f"{node.name}'s key{f' part {index + 1}' if arity > 1 else ''} is "
                               f"{_article(kind)} here, {_article(seen[0])} on line {seen[1].line}")

    # ---- expressions ------------------------------------------------------------------------
    def expr(self, node, statement: bool = False) -> None:
        if isinstance(node, ast.Builtin):
            self.builtin(node)
        elif isinstance(node, ast.Var):
            if node.name not in self.locals:
                self.fail(node, f"undefined variable {node.name}")
        elif isinstance(node, ast.MapRef):
            self.map_ref(node)
        elif isinstance(node, ast.Call):
            self.call(node, statement)
        elif isinstance(node, ast.Field):
            self.field(node)
        elif isinstance(node, ast.Unary):
            self.expr(node.operand)
        elif isinstance(node, ast.Binary):
            self.expr(node.left)
            self.expr(node.right)
        elif isinstance(node, ast.Ternary):
            for part in (node.condition, node.then, node.otherwise):
                self.expr(part)
        elif isinstance(node, ast.Tuple):
            for item in node.items:
                self.expr(item)
        elif isinstance(node, ast.String) and len(node.value.encode()) > 200:
            self.fail(node, f"string literal of {len(node.value.encode())} bytes: at most 200")

    def builtin(self, node: ast.Builtin) -> None:
        name = node.name
        if name in REFUSED:
            self.fail(node, REFUSED[name])
        if ARG.match(name):
            if self.kinds & {"BEGIN", "END", "interval", "profile", "uretprobe"} or \
                    any(a.kind == "tracepoint" and not a.entry for a in self.attaches):
                self.fail(node, f"{name} is the probed function's argument: uprobe and "
                                "tracepoint:syscalls:sys_enter_* probes have it")
            return
        if name not in BUILTINS:
            if name in FUNCTIONS or name in AGGREGATION_ARITY:
                self.fail(node, f"{name} is a function: {name}(...)")
            self.fail(node, f"unknown identifier {name!r}")
        if name == "retval" and not all(a.kind in RETURN_KINDS or
                                        (a.kind == "tracepoint" and not a.entry) for a in self.attaches):
            self.fail(node, "retval is only set in uretprobe and sys_exit_ probes")
        if name == "args":
            self.fail(node, "args is a structure: use args.NAME")

    def field(self, node: ast.Field) -> None:
        if not (isinstance(node.target, ast.Builtin) and node.target.name == "args"):
            self.fail(node, "fields are read from args only (args.NAME)")
        if self.attaches and all(a.kind == "uprobe" for a in self.attaches):
            self.uprobe_field(node)
            return
        if not all(a.kind == "tracepoint" for a in self.attaches):
            self.fail(node, "args.NAME is read in tracepoint:syscalls probes, or in uprobes of "
                            "a binary with DWARF (not in a uretprobe, nor with other probe kinds "
                            "in one block): use arg0..argN")
        from .syscall_args import check_field
        for attach in self.attaches:
            problem = check_field(attach, node.name)
            if problem:
                self.fail(node, problem)

    def uprobe_field(self, node: ast.Field) -> None:
        """args.NAME of each probed function, from its binary's DWARF (dwarf_args.py): checked
        now where BIN is a host file; a BIN named as the run maps it (uprobe:fib:fib) is read
        when its object is mapped, at the first hit."""
        import os

        from .dwarf_args import DwarfArgError, lookup
        for attach in self.attaches:
            if attach.address is not None or attach.offset:
                self.fail(node, f"args.NAME needs a function's entry: {attach.text} is not one")
            if os.path.isfile(attach.binary):
                try:
                    lookup(attach.binary, attach.function, node.name)
                except DwarfArgError as error:
                    self.fail(node, str(error))
        node.uprobe = True

    def call(self, node: ast.Call, statement: bool) -> None:
        name = node.name
        if name in REFUSED:
            self.fail(node, REFUSED[name])
        if name in AGGREGATION_ARITY:
            self.fail(node, f"{name}() is an aggregation: assign it to a map (@x = {name}(...))")
        if name not in FUNCTIONS:
            self.fail(node, f"unknown function {name!r}")
        least, most = FUNCTIONS[name]
        if not least <= len(node.args) <= most:
            wanted = str(least) if least == most else f"{least} to {most}"
            self.fail(node, f"{name}() takes {wanted} argument{'s' * (most != 1)}, not {len(node.args)}")
        if name in STATEMENT_ONLY and not statement:
            self.fail(node, f"{name}() is a statement: it has no value")
        if name in ("clear", "zero", "print") and isinstance(node.args[0], ast.MapRef) \
                and not node.args[0].keys:
            self.map_kinds.setdefault(node.args[0].name, ("any", node))
            return
        if name in ("clear", "zero") and not isinstance(node.args[0], ast.MapRef):
            self.fail(node.args[0], f"{name}() takes a map")
        if name == "delete" and not isinstance(node.args[0], ast.MapRef):
            self.fail(node.args[0], "delete() takes a map element: delete(@m[key])")
        if name == "printf" or (name == "time" and node.args):
            self.format_string(node, name)
            node_args = node.args[1:]
        else:
            node_args = node.args
        for arg in node_args:
            self.expr(arg)

    def format_string(self, node: ast.Call, name: str) -> None:
        fmt = node.args[0]
        if not isinstance(fmt, ast.String):
            self.fail(fmt, f"{name}()'s first argument is a string literal")
        if name == "time":
            return
        try:
            kinds = conversions(fmt.value)
        except FormatError as bad:
            self.fail(fmt, str(bad))
        if len(kinds) != len(node.args) - 1:
            self.fail(node, f"printf: the format has {len(kinds)} conversion"
                            f"{'s' * (len(kinds) != 1)}, {len(node.args) - 1} argument"
                            f"{'s' * (len(node.args) != 2)} given")


STRING_BUILTINS = {"comm", "func", "probe", "ustack"}
STRING_FUNCTIONS = {"str", "buf", "usym", "ustack"}


def value_kind(node) -> str | None:
    """"integer", "string", or None where the checks cannot tell before the run."""
    from .evaluator import integer_valued
    if isinstance(node, ast.String) or (isinstance(node, ast.Builtin) and node.name in STRING_BUILTINS) \
            or (isinstance(node, ast.Call) and node.name in STRING_FUNCTIONS):
        return "string"
    if integer_valued(node):
        return "integer"
    return None


def _article(kind: str) -> str:
    return "an integer" if kind == "integer" else "a string"


def _kind_text(kind: str) -> str:
    return "plain values" if kind == "value" else f"{kind}()"
