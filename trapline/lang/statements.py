"""The functions that are statements: printf, print, exit, clear, delete, zero, time, join.
Each writes to its consumer's output (consumer.py), or changes its maps, as bpftrace's do."""
import time as host_time

from . import ast
from .aggregations import Lhist
from .errors import StopAction
from .maps import value_text
from .printf import compile_format

JOIN_MAX = 16               # bpftrace's join() reads at most 16 strings


def compile_call_statement(compiler, node: ast.Call):
    name, consumer = node.name, compiler.consumer
    if name == "printf":
        formatted, values = compile_format(node.args[0].value), [compiler.expr(a) for a in node.args[1:]]
        if len(values) == 1:
            value = values[0]
            return lambda env: consumer.write(formatted((value(env),)))
        return lambda env: consumer.write(formatted([v(env) for v in values]))
    if name == "print":
        return _print(compiler, node)
    if name == "exit":
        def stop(env):
            consumer.exit()
            raise StopAction()
        return stop
    if name in ("clear", "zero"):
        target = node.args[0].name
        emptied = _clear if name == "clear" else _zero
        return lambda env: emptied(consumer.maps.get(target))
    if name == "delete":
        return _delete(compiler, node)
    if name == "time":
        fmt = node.args[0].value if node.args else "%H:%M:%S\n"
        return lambda env: consumer.write(virtual_wall_time(fmt, env.hit.nsecs))
    if name == "join":
        separator = node.args[1].value if len(node.args) > 1 else " "
        array = compiler.expr(node.args[0])
        return lambda env: consumer.write(_join(env.hit, array(env), separator) + "\n")
    value = compiler.expr(node)            # str(), ustack()... as a statement: evaluated, dropped
    return lambda env: value(env) and None


def _print(compiler, node: ast.Call):
    consumer, target = compiler.consumer, node.args[0]
    if isinstance(target, ast.MapRef) and not target.keys:
        extra = [compiler.expr(a) for a in node.args[1:]]

        def print_map(env):
            top, divisor = ([e(env) for e in extra] + [0, 1])[:2] if extra else (0, 1)
            shown = consumer.maps.get(target.name)
            consumer.write(shown.printed(top, divisor or 1))     # an empty map: an empty line
        return print_map
    value = compiler.expr(target)
    return lambda env: consumer.write(value_text(value(env)) + "\n")


def _clear(shown) -> None:
    shown.values.clear()


def _zero(shown) -> None:
    """zero(@m): every key stays, its value back to nothing counted."""
    for key, value in list(shown.values.items()):
        shown.values[key] = _zeroed(value)


def _zeroed(value):
    if isinstance(value, int):
        return 0
    if isinstance(value, str):
        return ""
    if isinstance(value, Lhist):
        return Lhist(value.low, value.high, value.step)
    return type(value)()


def _delete(compiler, node: ast.Call):
    target = node.args[0]
    if len(node.args) == 2:                          # delete(@m, key): bpftrace 0.20's form
        key_expr = compiler.expr(node.args[1])
        key = lambda env: (lambda k: k if isinstance(k, tuple) else (k,))(key_expr(env))   # noqa: E731
    else:
        key = compiler.key(target)
    consumer = compiler.consumer
    return lambda env: consumer.maps.get(target.name).values.pop(key(env), None) and None


def virtual_wall_time(fmt: str, nsecs: int) -> str:
    """time(): the guest's wall clock (the virtual clock from its epoch, kernel_model/time/
    clock.py), never the host's, in UTC."""
    from kernel_model.debug.abi import EPOCH_NS
    return host_time.strftime(fmt, host_time.gmtime((EPOCH_NS + nsecs) // 10**9))


def _join(hit, address: int, separator: str) -> str:
    """The NULL-terminated array of strings at `address` (an argv), joined."""
    size = hit.debug.arch(hit.process).bits // 8
    words = []
    for index in range(JOIN_MAX):
        pointer = hit.word(address + index * size)
        if not pointer:
            break
        words.append(hit.string(pointer))
    return separator.join(words)
