"""Text -> syntax tree (ast.py), with lark (LALR, grammar.lark). A syntax error names the line
and column and shows them with a caret (errors.py)."""
import functools
import importlib.resources

import lark

from . import ast
from .errors import ProgramError

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "0": "\0", "e": "\x1b"}


@functools.lru_cache(maxsize=1)
def _lark() -> lark.Lark:
    text = importlib.resources.files(__package__).joinpath("grammar.lark").read_text()
    return lark.Lark(text, parser="lalr", lexer="contextual", propagate_positions=True,
                     maybe_placeholders=True)


def parse(source: str, name: str = "-e") -> ast.Program:
    try:
        tree = _lark().parse(_without_shebang(source))
    except lark.UnexpectedInput as bad:
        message = _syntax_message(bad)
        line, column = bad.line, bad.column
        if message.endswith("end of program") or line < 1:      # the caret after the text
            lines = source.splitlines() or [""]
            line, column = len(lines), len(lines[-1]) + 1
        raise ProgramError(source, name, line, column, message) from None
    config, probes = _Build().transform(tree)
    return ast.Program(probes, source, name, config)


def _without_shebang(source: str) -> str:
    """A program file's `#!/usr/bin/env bpftrace` line, blanked (lines and columns stay)."""
    if not source.startswith("#!"):
        return source
    first, newline, rest = source.partition("\n")
    return " " * len(first) + newline + rest


def _syntax_message(bad) -> str:
    if isinstance(bad, lark.UnexpectedCharacters):
        return f"syntax error, unexpected character {bad.char!r}"
    if isinstance(bad, lark.UnexpectedEOF):
        return "syntax error, unexpected end of program"
    token = bad.token
    if token.type == "$END":
        return "syntax error, unexpected end of program"
    return f"syntax error, unexpected {str(token)!r}"


def integer_literal(text: str) -> int:
    """A literal the grammar's INT took: 0x... hex, 0... octal (C's, as bpftrace's lexer); Python's
    int(text, 0) refuses a leading 0."""
    if text[:2] in ("0x", "0X"):
        return int(text, 16)
    return int(text, 8) if text.startswith("0") else int(text)


def unescape(text: str) -> str:
    """A string literal's body with C's escapes (\\n, \\t, \\", \\\\, \\0) replaced."""
    out, i = [], 0
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text):
            out.append(_ESCAPES.get(text[i + 1], text[i + 1]))
            i += 2
            continue
        out.append(char)
        i += 1
    return "".join(out)


def _at(meta_or_token):
    return meta_or_token.line, meta_or_token.column


class _Config(list):
    """The config block's items (a list apart from the probes)."""


class _Build(lark.Transformer):
    """Tree -> ast nodes; rules with a position take `meta` (v_args)."""

    def start(self, children):
        config = children[0] if children and isinstance(children[0], _Config) else _Config()
        return config, [child for child in children if not isinstance(child, _Config)]

    def config(self, items):
        return _Config(item for item in items if item is not None)

    @lark.v_args(meta=True)
    def config_item(self, meta, children):
        key, value = children
        return ast.ConfigItem(*_at(meta), str(key), integer_literal(str(value)) if value.type == "INT" else str(value))

    @lark.v_args(meta=True)
    def probe(self, meta, children):
        points, predicate, body = children
        return ast.Probe(*_at(meta), points, predicate, body)

    def attach_points(self, tokens):
        return [ast.AttachPoint(t.line, t.column, str(t)) for t in tokens]

    def predicate(self, children):
        return children[0]

    def block(self, children):
        return children[0]

    def stmts(self, children):
        return [c for c in children if c is not None]

    @lark.v_args(meta=True)
    def if_stmt(self, meta, children):
        condition, then, otherwise = children
        if isinstance(otherwise, ast.If):
            otherwise = [otherwise]
        return ast.If(*_at(meta), condition, then, otherwise or [])

    @lark.v_args(meta=True)
    def unroll_stmt(self, meta, children):
        return ast.Unroll(*_at(meta), children[0], children[1])

    @lark.v_args(meta=True)
    def while_stmt(self, meta, children):
        return ast.While(*_at(meta), children[0], children[1])

    @lark.v_args(meta=True)
    def map_assign(self, meta, children):
        return ast.MapAssign(*_at(meta), children[0], children[1])

    @lark.v_args(meta=True)
    def map_compound(self, meta, children):
        target, op, value = children
        return ast.MapAssign(*_at(meta), target, value, str(op))

    @lark.v_args(meta=True)
    def var_assign(self, meta, children):
        return ast.VarAssign(*_at(meta), str(children[0]), children[1])

    @lark.v_args(meta=True)
    def var_compound(self, meta, children):
        name, op, value = children
        return ast.VarAssign(*_at(meta), str(name), value, str(op))

    @lark.v_args(meta=True)
    def map_postfix(self, meta, children):
        target, op = children
        return _increment(meta, target, str(op))

    @lark.v_args(meta=True)
    def map_prefix(self, meta, children):
        op, target = children
        return _increment(meta, target, str(op))

    @lark.v_args(meta=True)
    def var_postfix(self, meta, children):
        name, op = children
        one = ast.Integer(*_at(meta), 1)
        return ast.VarAssign(*_at(meta), str(name), one, "+=" if op == "++" else "-=")

    @lark.v_args(meta=True)
    def expr_stmt(self, meta, children):
        return ast.ExprStatement(*_at(meta), children[0])

    @lark.v_args(meta=True)
    def ternary(self, meta, children):
        return ast.Ternary(*_at(meta), *children)

    @lark.v_args(meta=True)
    def binop(self, meta, children):
        left, op, right = children
        return ast.Binary(op.line, op.column, str(op), left, right)

    @lark.v_args(meta=True)
    def unop(self, meta, children):
        op, operand = children
        if op == "-" and isinstance(operand, ast.Integer):
            return ast.Integer(*_at(meta), -operand.value)
        return ast.Unary(*_at(meta), "-" if op == "-" else str(op), operand)

    @lark.v_args(meta=True)
    def field(self, meta, children):
        target, name = children[0], children[-1]
        return ast.Field(name.line, name.column, target, str(name))

    def integer(self, children):
        token = children[0]
        return ast.Integer(*_at(token), integer_literal(str(token)))

    def string(self, children):
        token = children[0]
        return ast.String(*_at(token), unescape(str(token)[1:-1]))

    @lark.v_args(meta=True)
    def call(self, meta, children):
        name, *args = children
        return ast.Call(*_at(meta), str(name), [a for a in args if a is not None])

    def builtin(self, children):
        token = children[0]
        return ast.Builtin(*_at(token), str(token))

    def var(self, children):
        token = children[0]
        return ast.Var(*_at(token), str(token))

    @lark.v_args(meta=True)
    def tuple(self, meta, children):
        return ast.Tuple(*_at(meta), list(children))

    @lark.v_args(meta=True)
    def map(self, meta, children):
        name, *keys = children
        return ast.MapRef(*_at(meta), str(name), [k for k in keys if k is not None])


def _increment(meta, target, op: str) -> ast.MapAssign:
    """@x++ and ++@x: @x += 1 (bpftrace's increment operators on maps)."""
    one = ast.Integer(*_at(meta), 1)
    return ast.MapAssign(*_at(meta), target, one, "+=" if op == "++" else "-=")
