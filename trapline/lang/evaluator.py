"""Predicates and actions, compiled once into Python closures that run on every hit.

Each expression becomes a function of an Env (the hit, the block's $locals, the consumer); each
statement a function that does its work. Integers are 64-bit as in bpftrace: arithmetic wraps
to a signed 64-bit value, division and modulo truncate toward zero as C's do, and a division by
zero is a run-time error of the action (errors.RuntimeActionError) that the consumer reports,
naming the probe and the place; the guest never notices.
"""
import operator

from . import ast
from .aggregations import AGGREGATIONS, Lhist
from .errors import RuntimeActionError, StopAction  # noqa: F401  (consumer.py catches it)
from .statements import compile_call_statement
from .values import truth, wrap64

MAX_LOOP = 1 << 20          # a `while` runs at most this many times a hit (bpftrace: the verifier's bound)


INTEGER_BUILTINS = frozenset({"pid", "tid", "uid", "gid", "cpu", "nsecs", "elapsed", "retval"})


def integer_valued(node) -> bool:
    """The expression's value is an integer whatever the hit (argN, pid, literals, arithmetic
    of those): its comparisons need no type check."""
    if isinstance(node, ast.Integer):
        return True
    if isinstance(node, ast.Builtin):
        return node.name in INTEGER_BUILTINS or (node.name.startswith("arg") and node.name[3:].isdigit())
    if isinstance(node, ast.Field):
        return True                        # args.NAME: a syscall's argument word
    if isinstance(node, ast.Unary):
        return integer_valued(node.operand)
    if isinstance(node, ast.Binary):
        return node.op in _COMPARE or node.op in ("&&", "||") or \
            (integer_valued(node.left) and integer_valued(node.right))
    return False


class Env:
    __slots__ = ("hit", "locals", "consumer")

    def __init__(self, hit, consumer):
        self.hit, self.locals, self.consumer = hit, {}, consumer


def _divide(node):
    def divide(a, b):
        if b == 0:
            raise RuntimeActionError(node, "division by zero")
        quotient = abs(a) // abs(b)
        return quotient if (a < 0) == (b < 0) else -quotient
    return divide


def _modulo(node):
    divide = _divide(node)

    def modulo(a, b):
        return a - divide(a, b) * b
    return modulo


_ARITHMETIC = {"+": operator.add, "-": operator.sub, "*": operator.mul, "&": operator.and_,
               "|": operator.or_, "^": operator.xor, "<<": lambda a, b: a << (b & 63),
               ">>": lambda a, b: (a & ((1 << 64) - 1)) >> (b & 63)}
_COMPARE = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
            ">": operator.gt, ">=": operator.ge}


class Compiler:
    def __init__(self, consumer):
        self.consumer = consumer

    # ---- statements -------------------------------------------------------------------------
    def block(self, statements: list):
        compiled = [self.statement(s) for s in statements]
        if len(compiled) == 1:
            return compiled[0]

        def run(env):
            for statement in compiled:
                statement(env)
        return run

    def statement(self, node):
        if isinstance(node, ast.MapAssign):
            return self.map_assign(node)
        if isinstance(node, ast.VarAssign):
            return self.var_assign(node)
        if isinstance(node, ast.ExprStatement):
            if isinstance(node.expr, ast.Call):
                return compile_call_statement(self, node.expr)
            value = self.expr(node.expr)
            return lambda env: value(env) and None
        if isinstance(node, ast.If):
            return self.if_statement(node)
        if isinstance(node, ast.Unroll):
            body, times = self.block(node.body), node.count.value

            def unroll(env):
                for _ in range(times):
                    body(env)
            return unroll
        if isinstance(node, ast.While):
            return self.while_statement(node)
        raise AssertionError(f"no statement {type(node).__name__}")

    def if_statement(self, node: ast.If):
        condition, then = self.expr(node.condition), self.block(node.then)
        otherwise = self.block(node.otherwise) if node.otherwise else None

        def run(env):
            if truth(condition(env)):
                then(env)
            elif otherwise is not None:
                otherwise(env)
        return run

    def while_statement(self, node: ast.While):
        condition, body = self.expr(node.condition), self.block(node.body)

        def run(env):
            for _ in range(MAX_LOOP):
                if not truth(condition(env)):
                    return
                body(env)
            raise RuntimeActionError(node, f"while loop ran {MAX_LOOP} times: stopped")
        return run

    def var_assign(self, node: ast.VarAssign):
        name, value = node.name, self.expr(node.value)
        if node.op == "=":
            def assign(env):
                env.locals[name] = value(env)
            return assign
        combine = self.binary_operator(node.op[:-1], node)

        def update(env):
            env.locals[name] = combine(env.locals[name], value(env))
        return update

    def map_assign(self, node: ast.MapAssign):
        maps, name = self.consumer.maps, node.target.name
        key = self.key(node.target)
        value = node.value
        if isinstance(value, ast.Call) and value.name in AGGREGATIONS:
            return self.aggregate(node, key, value)
        compute = self.expr(value)
        if node.op == "=":
            def assign(env):
                maps.get(name).values[key(env)] = compute(env)
            return assign
        combine = self.binary_operator(node.op[:-1], node)

        def update(env):
            values = maps.get(name).values
            k = key(env)
            values[k] = combine(values.get(k, 0), compute(env))
        return update

    def aggregate(self, node, key, call: ast.Call):
        maps, name, kind = self.consumer.maps, node.target.name, AGGREGATIONS[call.name]
        argument = self.expr(call.args[0]) if call.args else (lambda env: None)
        if kind is Lhist:
            bounds = tuple(a.value for a in call.args[1:])
            make = lambda: Lhist(*bounds)          # noqa: E731
        else:
            make = kind

        def aggregate(env):
            values = maps.get(name).values
            k = key(env)
            found = values.get(k)
            if found is None:
                found = values[k] = make()
            value = argument(env)
            if value is not None and not isinstance(value, int):
                raise RuntimeActionError(call, f"{call.name}() of a string")
            found.add(value)
        return aggregate

    def key(self, target: ast.MapRef):
        parts = [self.expr(k) for k in target.keys]
        if not parts:
            return lambda env: ()
        if len(parts) == 1:
            part = parts[0]
            return lambda env: (part(env),)
        return lambda env: tuple(p(env) for p in parts)

    # ---- expressions ------------------------------------------------------------------------
    def expr(self, node):
        if isinstance(node, ast.Integer):
            value = node.value
            return lambda env: value
        if isinstance(node, ast.String):
            text = node.value
            return lambda env: text
        if isinstance(node, ast.Var):
            name = node.name
            return lambda env: env.locals[name]
        if isinstance(node, ast.Builtin):
            from .builtins import compile_builtin
            return compile_builtin(node, self.consumer)
        if isinstance(node, ast.Field):
            from .builtins import compile_field
            return compile_field(node)
        if isinstance(node, ast.MapRef):
            return self.map_read(node)
        if isinstance(node, ast.Unary):
            return self.unary(node)
        if isinstance(node, ast.Binary):
            return self.binary(node)
        if isinstance(node, ast.Ternary):
            condition, then, otherwise = (self.expr(n) for n in (node.condition, node.then, node.otherwise))
            return lambda env: then(env) if truth(condition(env)) else otherwise(env)
        if isinstance(node, ast.Tuple):
            items = [self.expr(i) for i in node.items]
            return lambda env: tuple(i(env) for i in items)
        if isinstance(node, ast.Call):
            from .builtins import compile_function
            return compile_function(self, node)
        raise AssertionError(f"no expression {type(node).__name__}")

    def map_read(self, node: ast.MapRef):
        """A map element read as a value: 0 where the key has none (bpftrace reads a zeroed
        value), an aggregation's value (count, sum...) where it holds one."""
        maps, name, key = self.consumer.maps, node.name, self.key(node)

        def read(env):
            found = maps.get(name).values.get(key(env), 0)
            if hasattr(found, "sort_key"):
                return found.sort_key()
            return found
        return read

    def unary(self, node: ast.Unary):
        operand = self.expr(node.operand)
        if node.op == "!":
            return lambda env: int(not truth(operand(env)))
        if node.op == "~":
            return lambda env: wrap64(~operand(env))
        return lambda env: wrap64(-operand(env))

    def binary(self, node: ast.Binary):
        left, right = self.expr(node.left), self.expr(node.right)
        if node.op == "&&":
            return lambda env: int(truth(left(env)) and truth(right(env)))
        if node.op == "||":
            return lambda env: int(truth(left(env)) or truth(right(env)))
        if node.op in _COMPARE:
            compare = _COMPARE[node.op]
            if integer_valued(node.left) and integer_valued(node.right):
                return lambda env: int(compare(left(env), right(env)))     # no check per hit

            def compared(env):
                a, b = left(env), right(env)
                if isinstance(a, str) != isinstance(b, str):
                    raise RuntimeActionError(node, f"'{node.op}' between a string and an integer")
                return int(compare(a, b))
            return compared
        combine = self.binary_operator(node.op, node)
        return lambda env: combine(left(env), right(env))

    def binary_operator(self, op: str, node):
        if op == "/":
            plain = _divide(node)
        elif op == "%":
            plain = _modulo(node)
        else:
            plain = _ARITHMETIC[op]

        def combine(a, b):
            if not isinstance(a, int) or not isinstance(b, int):
                raise RuntimeActionError(node, f"'{op}' of a string")
            return wrap64(plain(a, b))
        return combine

