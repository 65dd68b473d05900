"""run.handler: the user's handler (`trapline trace --handler`, US 9,336,001's user breakpoint
handler called inside the trapline page) as an input of the experiment.

Its file is read on the submitting host, checked the way trace checks it (a one-line error
naming the key), and becomes a tree of its own holding that one file, shipped to the workers
by content like a program (inputs.py) and listed in the manifest with its hash; a worker writes
it into its cache and loads the handler from there. So a changed handler is a changed input to
verify, and no worker needs the submitting host's path.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .inputs import Tree, materialize
from .spec import SpecError


@dataclass(frozen=True)
class HandlerPlan:
    """run.handler: its file is the one file of the tree `tree`; `symbol` the function of an
    object, "" for assembly."""
    tree: str
    name: str
    symbol: str
    fxsave: bool


def handler_plan(spec, text: str, fxsave: bool, key: str, trees: dict, cache: dict,
                 arch: str | None, host_path) -> HandlerPlan | None:
    """The point's HandlerPlan, or None without a handler (`cache`: one read per handler and
    arch); `arch`: the program's, which the handler must assemble for or be built for;
    `host_path(spec, text)`: where a path of the spec is on this host (plan.py)."""
    if not isinstance(text, str):
        raise SpecError(f"{spec.source}: {key}: expected a string, got {text!r}")
    if not isinstance(fxsave, bool):
        raise SpecError(f"{spec.source}: {key}_fxsave: expected true or false, got {fxsave!r}")
    if not text:
        if fxsave:
            raise SpecError(f"{spec.source}: {key}_fxsave: needs {key}")
        return None
    path_text, symbol = _split(text, spec)
    if ("handler", text, fxsave, arch) not in cache:
        host = host_path(spec, path_text)
        if not host.is_file():
            raise SpecError(f"{spec.source}: {key}: no file {str(host)!r}")
        _check(host, symbol, fxsave, arch, key, spec.source)
        tree = Tree()
        tree.add_file("/" + host.name, host.read_bytes(), 0o644, str(host))
        trees.setdefault(tree.digest, tree)
        cache[("handler", text, fxsave, arch)] = HandlerPlan(tree.digest, host.name, symbol, fxsave)
    return cache[("handler", text, fxsave, arch)]


def _split(text: str, spec) -> tuple[str, str]:
    """FILE.o:SYMBOL -> (FILE.o, SYMBOL); FILE.s -> (FILE.s, "") (load_handler's rule: a path
    that exists as written has no symbol)."""
    path, sep, symbol = text.rpartition(":")
    if not sep or (spec.base is not None and (spec.base / text).exists()) or os.path.exists(text):
        return text, ""
    return path, symbol


def _check(host: Path, symbol: str, fxsave: bool, arch: str | None, key: str, source: str) -> None:
    """What trace would refuse: a file it cannot load, assembly that does not assemble for the
    program's arch, an object built for the other arch."""
    from instrumenter.errors import InstrumenterError
    from instrumenter.strategies.handlers.user import load_handler
    try:
        handler = load_handler(f"{host}:{symbol}" if symbol else str(host), fxsave=fxsave)
        if arch is not None:
            handler.code_size(arch)
    except InstrumenterError as e:
        raise SpecError(f"{source}: {key}: {e}") from None


def load_shipped(handler, entries: list, blobs: dict):
    """In a worker: the UserHandler from the tree shipped with the point."""
    from instrumenter.strategies.handlers.user import load_handler
    folder = materialize(entries, blobs, handler.tree)
    path = folder / handler.name
    return load_handler(f"{path}:{handler.symbol}" if handler.symbol else str(path),
                        fxsave=handler.fxsave)
