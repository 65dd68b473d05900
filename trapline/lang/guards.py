"""A block's predicate as a native guard (instrumenter/strategies/native_guard.py), when it is
one the guest can decide alone: comparisons between argument words (arg0..arg5) and integer
constants, joined by &&, || and !, and a bare argN or constant as a truth value. The guard
means what the evaluator (evaluator.py) computes on the same words: its comparisons are
Python's on the unsigned words the tool reads, a constant expression is folded by the
evaluator itself. Anything else (pid, comm, retval, arithmetic on arguments, a map, a
comparison used as a number) gives None: the block's hits are then decided in Python.
"""
from instrumenter.strategies.native_guard import COMPARE, And, Arg, Compare, Const, Known, Not, Or

from . import ast
from .checks import ARG
from .errors import RuntimeActionError
from .values import truth

MAX_GUARD_ARG = 5                     # arg0..arg5: the words the guest parts can read


def predicate_guard(block):
    """The guard deciding `block`'s predicate (Known(True) when it has none), None when the
    predicate is not one a guard can decide."""
    predicate = block.node.predicate
    return Known(True) if predicate is None else condition(predicate)


def condition(node):
    """`node` as a truth value, or None."""
    if isinstance(node, ast.Binary) and node.op in ("&&", "||"):
        left, right = condition(node.left), condition(node.right)
        if left is None or right is None:
            return None
        return And(left, right) if node.op == "&&" else Or(left, right)
    if isinstance(node, ast.Unary) and node.op == "!":
        operand = condition(node.operand)
        return None if operand is None else Not(operand)
    if isinstance(node, ast.Binary) and node.op in COMPARE:
        left, right = word_operand(node.left), word_operand(node.right)
        if left is None or right is None:
            return None
        return Compare(node.op, left, right)
    word = word_operand(node)
    if isinstance(word, Arg):
        return Compare("!=", word, Const(0))
    if isinstance(word, Const):
        return Known(truth(word.value))
    return None


def word_operand(node):
    """An argument word or a constant, or None."""
    if isinstance(node, ast.Builtin):
        found = ARG.match(node.name)
        if found and int(found.group(1)) <= MAX_GUARD_ARG:
            return Arg(int(found.group(1)))
        return None
    if not _constant(node):
        return None
    from .evaluator import Compiler
    try:
        return Const(Compiler(None).expr(node)(None))
    except RuntimeActionError:                 # 1/0: the evaluator's run-time error, per hit
        return None


def _constant(node) -> bool:
    if isinstance(node, ast.Integer):
        return True
    if isinstance(node, ast.Unary):
        return _constant(node.operand)
    if isinstance(node, ast.Binary):
        return _constant(node.left) and _constant(node.right)
    return False
