"""From a spec to the points to run: each sweep point's parameters filled into the spec's
templates, its options checked the way `trapline trace` checks them, and its program as a tree
of files shipped by content (inputs.py). Everything a point needs is in its PointPlan, which a
worker process or a Dask worker receives with the tree's bytes: nothing refers to the
submitting host's files.
"""
from __future__ import annotations

import ast
import operator
import string
from dataclasses import dataclass, field
from pathlib import Path

from . import sweep as sweeps
from .handler_input import HandlerPlan, handler_plan
from .inputs import Tree, program_tree, rootfs_tree
from .metrics import selected
from .samples import ARCHES, sample_path
from .spec import DEFAULTS, PROFILE, SETTABLE, WALKUP, Spec, SpecError

NATIVE = ("", "count")          # and "args:N"


@dataclass
class PointPlan:
    index: int
    params: dict                 # every parameter: [params] and the sweep's values
    tree: str                    # the digest of the root file system it runs in
    program: str                 # the program's guest path
    argv: list[str]
    env: dict
    clear_env: bool
    stdin: bytes
    cwd: str
    probes: list[str]
    cold_probes: list[str]
    strategy: str
    native: str
    children: str
    backpatch: str
    quantum: int | None
    exact_quantum: bool          # the quantum ends at its very instruction (process/sched.py)
    max_insns: int
    detach_after: int
    detach_on: str               # a signal's name or number, "" for none
    enable_at: int               # the probes record enable_at < ts <= disable_at (0: never off)
    disable_at: int
    seed: int
    expected_hits: int | None
    expect_stdout: str | None
    baseline: bool
    collect: list[str]
    records: bool = False        # keep the probe records (`trace -f jsonl` lines)
    walkup: dict | None = None   # the walk-up's options, when the spec has [walkup]
    handler: HandlerPlan | None = None   # run.handler: the user handler, shipped as a tree
    profile: dict | None = None  # the profiler's options, when the spec has [profile]


@dataclass
class Plan:
    spec: Spec
    points: list[PointPlan]
    trees: dict[str, Tree] = field(default_factory=dict)
    parameters: list[str] = field(default_factory=list)      # column order: params, then sweep


def make_plan(spec: Spec) -> Plan:
    sweep = sweeps.drawn(spec.table("sweep"), spec.data.get("seed", 0))
    collect = selected(spec)
    plan = Plan(spec, [], parameters=list(spec.params) + sweeps.names(sweep))
    programs: dict[tuple, tuple[str, str]] = {}
    for index, point in enumerate(sweeps.points(sweep)):
        plan.points.append(_point(spec, index, point, collect, plan.trees, programs))
    return plan


def _point(spec: Spec, index: int, point: dict, collect: list[str], trees: dict,
           programs: dict) -> PointPlan:
    names = {"seed": spec.data.get("seed", 0), **spec.params, **point}
    program, run = spec.table("program"), spec.table("run")

    def option(name: str):
        table = SETTABLE.get(name, "")
        if name == "interval" and "profile" in spec.data:
            table = "profile"                    # the sampling interval of the [profile] point
        if name in point:
            return point[name], f"sweep.{name}"
        if name in spec.params:
            return spec.params[name], f"params.{name}"
        source = spec.data if not table else spec.table(table)
        return source.get(name, DEFAULTS.get(name)), f"{table + '.' if table else ''}{name}"

    def text(value, key: str) -> str:
        return _fill(str(value), names, key, spec.source)

    opts = {name: option(name) for name in SETTABLE}
    values = {}
    for name, (value, key) in opts.items():
        values[name] = text(value, key) if isinstance(value, str) else value
    _check_options(values, {n: k for n, (_, k) in opts.items()}, spec.source)
    tree, guest_program = _program(spec, values, opts, trees, programs)
    handler = handler_plan(spec, values["handler"], values["handler_fxsave"], opts["handler"][1],
                           trees, programs, _program_arch(trees[tree], guest_program), _host_path)
    expected = None
    if "expected_hits" in spec.table("metrics"):
        expected = _evaluate(spec.table("metrics")["expected_hits"], names,
                             "metrics.expected_hits", spec.source)
    probe_names = {**names, "expected_hits": expected}
    probes = [_fill(p, probe_names, f"run.probes[{i}]", spec.source)
              for i, p in enumerate(run.get("probes", []))]
    _check_probes(probes, spec.source)
    cold = _cold_probes(trees[tree], guest_program, values["cold_probes"], probes,
                        opts["cold_probes"][1], spec.source)
    expect = program.get("expect_stdout")
    return PointPlan(
        index=index, params={**spec.params, **point}, tree=tree, program=guest_program,
        argv=[text(a, f"program.argv[{i}]") for i, a in enumerate(program.get("argv", []))],
        env={k: text(v, f"program.env.{k}") for k, v in program.get("env", {}).items()},
        clear_env=program.get("clear_env", False), stdin=values["stdin"].encode(),
        cwd=values["cwd"], probes=probes, cold_probes=cold, strategy=values["strategy"],
        native=values["native"], children=values["children"], backpatch=values["backpatch"],
        quantum=values["quantum"], exact_quantum=values["exact_quantum"],
        max_insns=values["max_insns"], seed=values["seed"],
        detach_after=values["detach_after"], detach_on=values["detach_on"],
        enable_at=values["enable_at"], disable_at=values["disable_at"],
        walkup=({k: values[k] for k in WALKUP} if "walkup" in spec.data else None),
        profile=({k: values[k] for k in PROFILE} if "profile" in spec.data else None),
        handler=handler,
        expected_hits=expected,
        expect_stdout=None if expect is None else _fill(expect, probe_names, "program.expect_stdout",
                                                        spec.source),
        baseline=spec.table("metrics").get("baseline", False), collect=collect,
        records=spec.table("metrics").get("records", False))


def _fill(template: str, names: dict, key: str, source: str) -> str:
    """"{workers}" -> "4"; a name no parameter has is the spec's mistake, said with its key."""
    try:
        fields = [f for _, f, _, _ in string.Formatter().parse(template) if f is not None]
    except ValueError as e:
        raise SpecError(f"{source}: {key}: bad template {template!r} ({e})") from None
    for name in fields:
        if name not in names:
            raise SpecError(f"{source}: {key}: {{{name}}} names no parameter "
                            f"(have: {', '.join(sorted(names)) or 'none'})")
    return template.format_map(names)


_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
              ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod}


def _evaluate(expression: str, names: dict, key: str, source: str) -> int:
    """An integer expression of parameters: names, integers, + - * // % and parentheses."""
    try:
        tree = ast.parse(expression, mode="eval").body
    except SyntaxError:
        raise SpecError(f"{source}: {key}: {expression!r} is not an expression") from None

    def value(node):
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in names or type(names[node.id]) is not int:
                raise SpecError(f"{source}: {key}: {node.id!r} is not an integer parameter")
            return names[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
            return _OPERATORS[type(node.op)](value(node.left), value(node.right))
        raise SpecError(f"{source}: {key}: {expression!r}: only integers, parameters and "
                        "+ - * // % are allowed")
    return value(tree)


def _check_options(values: dict, keys: dict, source: str) -> None:
    from instrumenter.children.policies import BACKPATCH_MODES, POLICIES
    from instrumenter.strategies.registry import CHOICES

    def expect(name: str, allowed) -> None:
        if values[name] not in allowed:
            raise SpecError(f"{source}: {keys[name]}: {values[name]!r} is not one of "
                            f"{', '.join(map(str, allowed))}")
    if values["strategy"] not in CHOICES:        # a user's: package.module:Class or an entry point
        _check_user_strategy(values["strategy"], keys["strategy"], source)
    expect("children", POLICIES)
    expect("backpatch", BACKPATCH_MODES)
    expect("arch", ARCHES)
    expect("exclusive", ("off", "exact"))
    expect("mode", ("pc", "stack"))
    for name in ("window", "period", "interval"):
        if type(values[name]) is not int or values[name] < 1:
            raise SpecError(f"{source}: {keys[name]}: expected an integer >= 1, got {values[name]!r}")
    if isinstance(values["threshold"], bool) or not isinstance(values["threshold"], (int, float)) \
            or not 0 < values["threshold"] <= 100:
        raise SpecError(f"{source}: {keys['threshold']}: expected a percentage in (0, 100], "
                        f"got {values['threshold']!r}")
    if values["detach_on"]:
        from ..cli.detach import _signal_number
        from ..errors import UsageError
        try:
            _signal_number(str(values["detach_on"]))
        except UsageError:
            raise SpecError(f"{source}: {keys['detach_on']}: {values['detach_on']!r} is no signal "
                            "(SIGUSR2, USR2, or 1..64)") from None
    if values["disable_at"] and values["disable_at"] <= values["enable_at"]:
        raise SpecError(f"{source}: {keys['disable_at']}: {values['disable_at']} is not after "
                        f"enable_at {values['enable_at']}: the probes would record nothing")
    native = values["native"]
    if native not in NATIVE and not (native.startswith("args:") and native[5:].isdigit()):
        raise SpecError(f"{source}: {keys['native']}: {native!r} is not count or args:N")
    for name, low in (("quantum", 1), ("max_insns", 0), ("cold_probes", 0), ("seed", 0),
                      ("detach_after", 0), ("enable_at", 0), ("disable_at", 0)):
        value = values[name]
        if value is None and name == "quantum":
            continue
        if type(value) is not int or value < low:
            raise SpecError(f"{source}: {keys[name]}: expected an integer >= {low}, got {value!r}")


def _check_user_strategy(name, key: str, source: str) -> None:
    """A strategy not of ours must import and implement the interface (the registry's one
    line, with the key), as `trapline trace --strategy` checks it."""
    from instrumenter.errors import StrategyError
    from instrumenter.strategies import registry
    if not isinstance(name, str):
        raise SpecError(f"{source}: {key}: {name!r} is not a strategy name")
    try:
        registry.load(registry.resolve(name))
    except StrategyError as bad:
        if ":" in name:                 # it could not be imported, or is no strategy: why
            raise SpecError(f"{source}: {key}: {bad}") from None
        raise SpecError(f"{source}: {key}: {name!r} is not one of {', '.join(registry.CHOICES)}, "
                        f"package.module:Class, or a strategy an installed package registers "
                        f"(entry-point group {registry.ENTRY_POINT_GROUP})") from None


def _check_probes(probes: list[str], source: str) -> None:
    from ..probespec import parse_probe_spec
    for i, text in enumerate(probes):
        try:
            parse_probe_spec(text)
        except SpecError:
            raise
        except Exception as e:          # the probe parser's one line, with the key
            raise SpecError(f"{source}: run.probes[{i}]: {e}") from None


def _program(spec: Spec, values: dict, opts: dict, trees: dict, programs: dict) -> tuple[str, str]:
    """The tree the point runs in and its program's guest path (each distinct program is read
    once: the sweep's points share it)."""
    program = spec.table("program")
    if "sample" in program or "sample" in spec.params:
        key = ("sample", values["sample"], values["arch"])
    elif values["rootfs"]:
        key = ("rootfs", values["rootfs"], values["path"])
    else:
        key = ("path", values["path"])
    if key not in programs:
        programs[key] = _read_program(spec, key, opts)
        tree, guest = programs[key]
        trees.setdefault(tree.digest, tree)
    tree, guest = programs[key]
    return tree.digest, guest


def _read_program(spec: Spec, key: tuple, opts: dict) -> tuple[Tree, str]:
    kind = key[0]
    if kind == "sample":
        try:
            path = sample_path(key[1], key[2])
        except LookupError as e:
            raise SpecError(f"{spec.source}: {opts['sample'][1]}: {e}") from None
        return program_tree(path.read_bytes(), key[1], f"sample:{key[2]}/{key[1]}")
    if kind == "path":
        path = _host_path(spec, key[1])
        if not path.is_file():
            raise SpecError(f"{spec.source}: {opts['path'][1]}: no file {str(path)!r}")
        return program_tree(path.read_bytes(), path.name, str(path))
    root = _host_path(spec, key[1])
    if not root.is_dir():
        raise SpecError(f"{spec.source}: {opts['rootfs'][1]}: {str(root)!r} is not a directory")
    guest = key[2] if key[2].startswith("/") else "/" + key[2]
    tree = rootfs_tree(root, f"{root}")
    if not any(e.path == guest for e in tree.entries):
        raise SpecError(f"{spec.source}: {opts['path'][1]}: no {guest} in the rootfs {str(root)!r}")
    return tree, guest


def _host_path(spec: Spec, text: str) -> Path:
    path = Path(text).expanduser()
    if not path.is_absolute():
        if spec.base is None:
            raise SpecError(f"{spec.source}: a shipped spec names host paths relative to nothing: "
                            f"{text!r}")
        path = spec.base / path
    return path


def _cold_probes(tree: Tree, program: str, count: int, probes: list[str], key: str,
                 source: str) -> list[str]:
    """`count` uprobes on the program's functions, in address order, none on a function a
    probe of run.probes names (the probe-cost experiment's probes that cost without firing)."""
    if not count:
        return []
    entry = next((e for e in tree.entries if e.path == program and e.kind == "file"), None)
    if entry is None:
        raise SpecError(f"{source}: {key}: the program {program} is not a regular file")
    name = program.rsplit("/", 1)[-1]
    taken = {p.rsplit(":", 1)[-1].partition("+")[0] for p in probes}
    functions = [f for f in _functions(tree.blobs[entry.sha256], entry.sha256, key, source)
                 if f not in taken]
    if count > len(functions):
        raise SpecError(f"{source}: {key}: {count} asked, {program} has {len(functions)} functions "
                        "to place them on")
    return [f"uprobe:{name}:{function}" for function in functions[:count]]


_FUNCTIONS: dict[str, list[str]] = {}      # program sha256 -> its functions (read once a process)


def _functions(data: bytes, digest: str, key: str, source: str) -> list[str]:
    """The program's sized, plainly named functions in address order, each name once (the
    sweep's points read the same bytes: 10 000 symbols are read once, not once a point)."""
    if digest not in _FUNCTIONS:
        import io

        from elftools.common.exceptions import ELFError
        from elftools.elf.elffile import ELFFile
        try:
            symbols = ELFFile(io.BytesIO(data)).get_section_by_name(".symtab")
        except ELFError as e:
            raise SpecError(f"{source}: {key}: the program is not ELF ({e})") from None
        functions = sorted({(s["st_value"], s.name) for s in (symbols.iter_symbols() if symbols else [])
                            if s["st_info"]["type"] == "STT_FUNC" and s["st_size"] > 0
                            and s.name and _plain(s.name)})
        _FUNCTIONS[digest] = list(dict.fromkeys(n for _, n in functions))
    return _FUNCTIONS[digest]


def _program_arch(tree: Tree, program: str) -> str | None:
    """i386 or x86_64 from the program's ELF header (e_machine: EM_386 3, EM_X86_64 62), None
    for a program that is not an ELF file of either (a script, a link)."""
    entry = next((e for e in tree.entries if e.path == program and e.kind == "file"), None)
    data = tree.blobs[entry.sha256] if entry is not None else b""
    if len(data) < 20 or data[:4] != b"\x7fELF":
        return None
    return {3: "i386", 62: "x86_64"}.get(int.from_bytes(data[18:20], "little"))


def _plain(name: str) -> bool:
    return name.replace("_", "a").replace(".", "a").isalnum() and not name[0].isdigit()
