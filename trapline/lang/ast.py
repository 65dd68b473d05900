"""The probe language's syntax tree: what the parser (parser.py) makes of a program's text.

Every node keeps where it starts in the text (line, column, 1-based) so that the semantic
checks (checks.py) and the run-time errors (evaluator.py) can point at it with a caret, as
bpftrace's messages do.
"""
from dataclasses import dataclass, field


@dataclass
class Node:
    line: int
    column: int


# ---- expressions ----------------------------------------------------------------------------
@dataclass
class Integer(Node):
    value: int


@dataclass
class String(Node):
    value: str


@dataclass
class Builtin(Node):
    name: str                  # pid, comm, arg0, retval, args, ...


@dataclass
class Var(Node):
    name: str                  # "$x"


@dataclass
class MapRef(Node):
    name: str                  # "@", "@bytes"
    keys: list = field(default_factory=list)     # key expressions ([] for a scalar map)


@dataclass
class Call(Node):
    name: str
    args: list


@dataclass
class Field(Node):
    target: Node
    name: str                  # args.NAME
    uprobe: bool = False       # a uprobe's parameter (dwarf_args.py), set by the checks


@dataclass
class Unary(Node):
    op: str
    operand: Node


@dataclass
class Binary(Node):
    op: str
    left: Node
    right: Node


@dataclass
class Ternary(Node):
    condition: Node
    then: Node
    otherwise: Node


@dataclass
class Tuple(Node):
    items: list


# ---- statements -----------------------------------------------------------------------------
@dataclass
class MapAssign(Node):
    target: MapRef
    value: Node                # a Call of an aggregation (count(), hist(x)) or a plain value
    op: str = "="              # "=", "+=", ...


@dataclass
class VarAssign(Node):
    name: str
    value: Node
    op: str = "="


@dataclass
class ExprStatement(Node):
    expr: Node


@dataclass
class If(Node):
    condition: Node
    then: list
    otherwise: list


@dataclass
class Unroll(Node):
    count: Node
    body: list


@dataclass
class While(Node):
    condition: Node
    body: list


# ---- program --------------------------------------------------------------------------------
@dataclass
class AttachPoint(Node):
    text: str


@dataclass
class ConfigItem(Node):
    key: str
    value: int | str


@dataclass
class Probe(Node):
    attach_points: list
    predicate: Node | None
    body: list


@dataclass
class Program:
    probes: list
    source: str                # the text, for error carets
    name: str = "-e"           # "-e" or the file's path
    config: list = field(default_factory=list)   # ConfigItems of a `config = { ... }` block
