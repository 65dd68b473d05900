"""An experiment spec: a TOML file read with tomllib and checked key by key, so that every mistake
is one line naming the key (`SpecError`, exit 2 as every usage error: trapline/exit_status.py).

    name = "loss"                       # required: [A-Za-z0-9_.-]+
    description = "..."
    seed = 0                            # the kernel's seed (getrandom, AT_RANDOM, ...)

    [program]                           # required: exactly one of sample and path
    sample = "loss_threads"             # a shipped sample, for `arch` (samples.py)
    arch = "x86_64"                     # i386 | x86_64 (samples only)
    path = "bin/prog"                   # a program: a host file (relative to the spec's folder),
    rootfs = "root"                     #   or, with a rootfs, a path inside it
    argv = ["4", "100"]                 # the arguments after the program
    env = { LANG = "C" }                # added to the default environment (clear_env: only these)
    clear_env = false
    stdin = ""
    expect_stdout = "threads={workers} calls={expected_hits}\n"   # checked per point

    [run]
    probes = ["uprobe:loss_threads:probed"]   # the specs of `trapline trace -p`
    cold_probes = 0                     # plus this many uprobes on the program's other functions
    strategy = "auto"                   # the registry's names (`trapline trace --strategy`)
    native = ""                         # "count" or "args:N": the action runs in the guest
    children = "follow"                 # follow | detach | naive
    backpatch = "lazy"                  # lazy | eager
    quantum = 200000                    # the scheduler's default (trapline run --quantum)
    max_insns = 0
    detach_after = 0                    # detach every probe after N instructions (trace
                                        #   --detach-after); 0: never
    detach_on = "SIGUSR1"               # ... or when the guest gets this signal (--detach-on)
    enable_at = 0                       # every probe records the hits with enable_at < ts <=
    disable_at = 0                      #   disable_at (trace --enable-at/--disable-at); 0: never
    handler = "h/limit_n.o:limit_n"     # trace --handler: FILE.s, FILE.o:SYMBOL or FILE.so:SYMBOL
    handler_fxsave = false              #   (a host file, shipped by content), called in-page at
                                        #   every uprobe hit; "" none

    [walkup]                            # instead of probes: the walk-up against full
    threshold = 10                      #   instrumentation (walkup_point.py), with these
    window = 50                         #   options of `trapline profile --walk-up`
    period = 50
    interval = 10000
    exclusive = "off"

    [profile]                           # instead of probes: the sampling profiler's error
    interval = 1000                     #   against the exact per-function profile
    mode = "pc"                         #   (profile_point.py): `trapline profile`'s options

    [params]                            # constants, usable as {name} and in expressions
    calls = 100

    [sweep]                             # the cartesian product of these lists, in this order;
    strategy = ["emulate", "jump"]      # a name of a [run]/[program] option sets that option
    zip = [{ guest = ["threads", "processes"], sample = ["loss_threads", "loss_procs"] }]
    detach_after = { random = 8, low = 1000, high = 60000 }   # 8 integers drawn from the
                                        #   spec's seed (sorted): the same on every run

    [metrics]
    collect = ["hits", "guest_insns"]   # default: every deterministic metric (metrics.py)
    expected_hits = "workers * calls"   # an expression of params: gives lost_hits
    baseline = false                    # also run unprobed: instructions added by the probes
    records = false                     # keep each point's probe records: DIR/records/N.jsonl

    [[plots]]
    name = "lost"                       # DIR/lost.png and DIR/lost.svg
    x = "quantum"
    y = "lost_hits"
    series = "strategy"                 # one line per value
    panels = "guest"                    # one panel per value (optional)
    logx = false

Strings of [program] and [run] (and expect_stdout) may name parameters as {name}: a point's
values are filled in before anything runs, and each point is checked as the user wrote it.
"""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UsageError


class SpecError(UsageError):
    """A spec that cannot run, in one line naming the key."""


# key -> (type or types, required); the types are Python's as tomllib gives them
TOP = {"name": (str, True), "description": (str, False), "seed": (int, False),
       "program": (dict, True), "run": (dict, False), "walkup": (dict, False), "profile": (dict, False),
       "params": (dict, False),
       "sweep": (dict, False), "metrics": (dict, False), "plots": (list, False)}
PROGRAM = {"sample": (str, False), "arch": (str, False), "path": (str, False),
           "rootfs": (str, False), "argv": (list, False), "env": (dict, False),
           "clear_env": (bool, False), "stdin": (str, False), "cwd": (str, False),
           "expect_stdout": (str, False)}
RUN = {"probes": (list, False), "cold_probes": (int, False), "strategy": (str, False),
       "native": (str, False), "children": (str, False), "backpatch": (str, False),
       "quantum": (int, False), "exact_quantum": (bool, False), "max_insns": (int, False),
       "detach_after": (int, False),
       "handler": (str, False), "handler_fxsave": (bool, False), "detach_on": (str, False),
       "enable_at": (int, False), "disable_at": (int, False)}
# [walkup]: the point measures the walk-up against full instrumentation (walkup_point.py)
WALKUP = {"threshold": ((int, float), False), "window": (int, False), "period": (int, False),
          "interval": (int, False), "exclusive": (str, False)}
# [profile]: the point measures the sampling profiler against the exact profile (profile_point.py)
PROFILE = {"interval": (int, False), "mode": (str, False)}
METRICS = {"collect": (list, False), "expected_hits": (str, False), "baseline": (bool, False),
           "records": (bool, False)}
PLOT = {"name": (str, True), "x": (str, True), "y": (str, True), "series": (str, False),
        "panels": (str, False), "logx": (bool, False), "logy": (bool, False),
        "title": (str, False)}
# options a sweep or a param of the same name sets, with the table they belong to (interval:
# the [walkup]'s or the [profile]'s sampling interval, whichever table the spec has)
SETTABLE = {**{k: "program" for k in ("sample", "arch", "path", "rootfs", "stdin", "cwd")},
            **{k: "run" for k in RUN if k != "probes"}, **{k: "walkup" for k in WALKUP},
            "mode": "profile", "seed": ""}
POINT_KINDS = ("walkup", "profile")     # tables that make a point other than a probed run
DEFAULTS = {"arch": "x86_64", "cold_probes": 0, "strategy": "auto", "native": "",
            "children": "follow", "backpatch": "lazy", "quantum": None, "exact_quantum": False,
            "max_insns": 0,
            "seed": 0, "clear_env": False, "stdin": "", "cwd": "/", "detach_after": 0,
            "handler": "", "handler_fxsave": False, "detach_on": "", "enable_at": 0,
            "disable_at": 0,
            # the walk-up's (trapline profile --walk-up's defaults, --interval 10000)
            "threshold": 10.0, "window": 50, "period": 50, "interval": 10000, "exclusive": "off",
            "mode": "pc"}
_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")
_PARAM = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass
class Spec:
    """A checked spec: `data` is the TOML as read, `text` its bytes (hashed into the manifest),
    `base` the folder its relative paths start from (None: a shipped spec)."""
    data: dict
    text: bytes
    base: Path | None
    source: str                          # where it came from, for messages and the manifest
    params: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.data["name"]

    def table(self, key: str) -> dict:
        return self.data.get(key, {})


def load_spec(text: bytes, source: str, base: Path | None) -> Spec:
    try:
        data = tomllib.loads(text.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise SpecError(f"{source}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    except tomllib.TOMLDecodeError as e:
        raise SpecError(f"{source}: not TOML: {e}") from None
    check_structure(data, source)
    return Spec(data, text, base, source, dict(data.get("params", {})))


def check_structure(data: dict, source: str) -> None:
    """Keys and types; the values that depend on a point are checked per point (points.py)."""
    _check_table(data, TOP, "", source)
    if not _NAME.match(data["name"]):
        raise SpecError(f"{source}: name: {data['name']!r} is not a name ([A-Za-z0-9_.-]+)")
    program = data["program"]
    _check_table(program, PROGRAM, "program.", source)
    if ("sample" in program) == ("path" in program):
        raise SpecError(f"{source}: program: give exactly one of program.sample and program.path")
    _check_strings(program.get("argv", []), "program.argv", source, numbers=True)
    for key, value in program.get("env", {}).items():
        if not isinstance(value, str):
            raise SpecError(f"{source}: program.env.{key}: expected a string, got {_kind(value)}")
    run = data.get("run", {})
    _check_table(run, RUN, "run.", source)
    _check_strings(run.get("probes", []), "run.probes", source)
    for key in ("cold_probes", "max_insns", "detach_after", "enable_at", "disable_at"):
        if run.get(key, 0) < 0:
            raise SpecError(f"{source}: run.{key}: expected a number >= 0, got {run[key]}")
    if run.get("quantum", 1) < 1:
        raise SpecError(f"{source}: run.quantum: expected a number >= 1, got {run['quantum']}")
    for key, value in data.get("params", {}).items():
        _check_param_name(key, "params", source)
        if not isinstance(value, (str, int, float, bool)):
            raise SpecError(f"{source}: params.{key}: expected a string, number or boolean, "
                            f"got {_kind(value)}")
    _check_sweep(data.get("sweep", {}), data.get("params", {}), source)
    _check_table(data.get("walkup", {}), WALKUP, "walkup.", source)
    _check_table(data.get("profile", {}), PROFILE, "profile.", source)
    if "walkup" in data and "profile" in data:
        raise SpecError(f"{source}: profile: a point is a walk-up or a profile, not both "
                        "(one spec each)")
    for kind in POINT_KINDS:
        if kind in data and (run.get("probes") or run.get("cold_probes")):
            raise SpecError(f"{source}: {kind}: a {kind} point places its own hooks: no run.probes")
    metrics = data.get("metrics", {})
    _check_table(metrics, METRICS, "metrics.", source)
    _check_strings(metrics.get("collect", []), "metrics.collect", source)
    for i, plot in enumerate(data.get("plots", [])):
        if not isinstance(plot, dict):
            raise SpecError(f"{source}: plots[{i}]: expected a table, got {_kind(plot)}")
        _check_table(plot, PLOT, f"plots[{i}].", source)
        if not _NAME.match(plot["name"]):
            raise SpecError(f"{source}: plots[{i}].name: {plot['name']!r} is not a file name")


def _check_sweep(sweep: dict, params: dict, source: str) -> None:
    for key, value in sweep.items():
        if key == "zip":
            if not isinstance(value, list) or not all(isinstance(g, dict) for g in value):
                raise SpecError(f"{source}: sweep.zip: expected a list of tables of lists")
            for i, group in enumerate(value):
                lengths = set()
                if not group:
                    raise SpecError(f"{source}: sweep.zip[{i}]: empty group")
                for name, values in group.items():
                    _check_axis(name, values, f"sweep.zip[{i}].{name}", params, source)
                    lengths.add(len(values))
                if len(lengths) > 1:
                    raise SpecError(f"{source}: sweep.zip[{i}]: its lists differ in length "
                                    f"({', '.join(f'{n}={len(v)}' for n, v in group.items())})")
            continue
        if isinstance(value, dict):
            _check_random(value, f"sweep.{key}", source)
            _check_axis(key, [0], f"sweep.{key}", params, source)
            continue
        _check_axis(key, value, f"sweep.{key}", params, source)


RANDOM = {"random": (int, True), "low": (int, True), "high": (int, True)}


def _check_random(table: dict, key: str, source: str) -> None:
    """{ random = N, low = A, high = B }: N distinct integers drawn in [A, B]."""
    _check_table(table, RANDOM, f"{key}.", source)
    if table["random"] < 1 or table["high"] - table["low"] + 1 < table["random"]:
        raise SpecError(f"{source}: {key}: cannot draw {table['random']} distinct integers "
                        f"from [{table['low']}, {table['high']}]")


def _check_axis(name: str, values, key: str, params: dict, source: str) -> None:
    _check_param_name(name, key.rpartition(".")[0], source)
    if name in params:
        raise SpecError(f"{source}: {key}: also in [params]; a parameter is one or the other")
    if not isinstance(values, list):
        raise SpecError(f"{source}: {key}: expected a list of values, got {_kind(values)}")
    if not values:
        raise SpecError(f"{source}: {key}: empty list (a sweep needs at least one value)")
    for value in values:
        if not isinstance(value, (str, int, float, bool)):
            raise SpecError(f"{source}: {key}: expected strings, numbers or booleans, "
                            f"got {_kind(value)}")


def _check_param_name(name: str, table: str, source: str) -> None:
    if not _PARAM.match(name):
        raise SpecError(f"{source}: {table}.{name}: not a parameter name ([A-Za-z_][A-Za-z0-9_]*)")


def _check_table(table: dict, keys: dict, prefix: str, source: str) -> None:
    for key, value in table.items():
        if key not in keys:
            raise SpecError(f"{source}: {prefix}{key}: unknown key (have: {', '.join(keys)})")
        expected = keys[key][0]
        numeric = expected is int or isinstance(expected, tuple)      # true is no number
        if not isinstance(value, expected) or (numeric and isinstance(value, bool)):
            raise SpecError(f"{source}: {prefix}{key}: expected {_type_name(expected)}, "
                            f"got {_kind(value)}")
    for key, (_, required) in keys.items():
        if required and key not in table:
            raise SpecError(f"{source}: {prefix}{key}: missing (required)")


def _check_strings(values: list, key: str, source: str, *, numbers: bool = False) -> None:
    for i, value in enumerate(values):
        ok = isinstance(value, str) or (numbers and isinstance(value, int)
                                        and not isinstance(value, bool))
        if not ok:
            raise SpecError(f"{source}: {key}[{i}]: expected a string, got {_kind(value)}")


def _type_name(kind) -> str:
    if isinstance(kind, tuple):
        return "a number"
    return {str: "a string", int: "an integer", bool: "true or false", dict: "a table",
            list: "a list", float: "a number"}[kind]


def _kind(value) -> str:
    if isinstance(value, bool):
        return "a boolean"
    return {str: "a string", int: "an integer", float: "a float", dict: "a table",
            list: "a list"}.get(type(value), type(value).__name__)
