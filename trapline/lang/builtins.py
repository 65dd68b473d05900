"""The built-in variables and the functions that have a value (str, buf, usym, uaddr,
ustack), compiled for the evaluator (evaluator.py)."""
import re

from . import ast
from .errors import RuntimeActionError
from .hit import STRING_LIMIT

ARG = re.compile(r"arg(\d+)$")


def compile_builtin(node: ast.Builtin, consumer):
    name = node.name
    found = ARG.match(name)
    if found:
        index = int(found.group(1))
        return lambda env: env.hit.arg(index)
    if name in ("uid", "gid", "cpu"):
        # the guest runs as root (kernel_model/syscalls/impls/process.py getuid) on one modeled CPU
        return lambda env: 0
    if name == "elapsed":
        return lambda env: env.hit.nsecs - consumer.start_ns
    if name == "ustack":
        return lambda env: consumer.stacks.ustack(env.hit, 0)
    attribute = name                       # pid tid comm nsecs retval func probe
    return lambda env: getattr(env.hit, attribute)


def compile_field(node: ast.Field):
    field = node.name
    if node.uprobe:
        return _parameter_reader(node)

    def read(env):
        value = env.hit.named_arg(field)
        if value is None:
            raise RuntimeActionError(node, f"{env.hit.syscall} has no argument {field!r}")
        return value
    return read


def _parameter_reader(node: ast.Field):
    """A uprobe's args.NAME: the probed function's parameter (dwarf_args.py), found in the DWARF
    of the object the hit is in (its path is in the probe's name: uprobe:PATH:FUNC) once per
    probe."""
    from .dwarf_args import DwarfArgError, lookup
    found: dict[str, object] = {}          # probe -> its Parameter, or why there is none

    def read(env):
        hit = env.hit
        parameter = found.get(hit.probe)
        if parameter is None:
            path = hit.probe.partition(":")[2].rpartition(":")[0]
            try:
                parameter = lookup(path, hit.func, node.name)[hit.func]
            except DwarfArgError as error:
                parameter = str(error)
            found[hit.probe] = parameter
        if isinstance(parameter, str):
            raise RuntimeActionError(node, parameter)
        return parameter.value(hit.arg)
    return read


def compile_function(compiler, node: ast.Call):
    args = [compiler.expr(a) for a in node.args]
    name = node.name
    if name == "str":
        limit = args[1] if len(args) > 1 else (lambda env: STRING_LIMIT)

        def string(env):
            value = args[0](env)
            if isinstance(value, str):
                return value[:limit(env)]
            return env.hit.string(value, max(0, min(limit(env), STRING_LIMIT)))
        return string
    if name == "buf":
        def buffer(env):
            return escaped(env.hit.bytes_at(args[0](env), max(0, min(args[1](env), 64))))
        return buffer
    if name == "usym":
        return lambda env: env.hit.symbol(args[0](env)).split("+", 1)[0]
    if name == "uaddr":
        return lambda env: compiler.consumer.stacks.uaddr(env.hit, args[0](env), node)
    if name == "ustack":
        return lambda env: compiler.consumer.stacks.ustack(env.hit, args[0](env))
    raise AssertionError(f"no function {name}")


def escaped(data: bytes) -> str:
    """bpftrace prints a buf() as its printable bytes, the others as \\xNN."""
    return "".join(chr(b) if 32 <= b < 127 else f"\\x{b:02x}" for b in data)
