"""User handlers (US 9,336,001's user breakpoint handler, FIG. 2 item 146): the user's own code,
copied into each trampoline page that calls it (instrumenter/strategies/page_layout.py says how
it is called: `handler(struct trapline_regs *regs, void *scratch)`, the psABI's convention).

Two forms (`--handler`):
  FILE.s           Intel-syntax assembly, assembled with keystone at the address of each copy
                   (so labels and absolute references are right wherever it lands). It runs from
                   its first instruction and returns with `ret`.
  FILE.o:SYMBOL    the function SYMBOL of an ELF relocatable object, relocated into the page
                   (instrumenter/strategies/handlers/object_file.py; compile with -fPIC).
  FILE.so:SYMBOL   the function SYMBOL of a shared object, copied whole into the page and
                   relocated there (instrumenter/strategies/handlers/shared_object.py).

A handler is loaded (and an object read) once, when the probe is made; its bytes are produced
per placement, for the architecture of the probed process.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from ...errors import InstrumenterError
from ...probes.definitions import UPROBE
from ..page_layout import assemble


@dataclass(frozen=True)
class HandlerImage:
    code: bytes            # for the address it was made for
    entry: int             # the address to call
    data: bytes            # writable data, for the data address it was made for


@dataclass
class UserHandler:
    spec: str                              # as the user wrote it (messages)
    fxsave: bool = False                   # save x87/SSE state around the call (FXSAVE/FXRSTOR)
    source: str | None = None              # .s text
    obj: object = None                     # .o or .so (object_file.py, shared_object.py)
    _sizes: dict = field(default_factory=dict, repr=False)

    @property
    def label(self) -> str:
        return "handler"

    def check_arch(self, arch: str) -> None:
        if self.obj is not None and self.obj.arch != arch:
            raise InstrumenterError(f"handler {self.spec}: built for {self.obj.arch}, the probed "
                                    f"process runs {arch}")

    def code_size(self, arch: str) -> int:
        """Bytes of code (the same wherever it is placed: checked when it is placed)."""
        self.check_arch(arch)
        if self.obj is not None:
            return self.obj.code_size
        size = self._sizes.get(arch)
        if size is None:
            size = self._sizes[arch] = len(self._assemble(arch, 0))
        return size

    def data_size(self, arch: str) -> int:
        return self.obj.data_size if self.obj is not None else 0

    def image(self, arch: str, code_at: int, data_at: int) -> HandlerImage:
        if self.obj is not None:
            code, entry, data = self.obj.image(code_at, data_at)
            return HandlerImage(code, entry, data)
        code = self._assemble(arch, code_at)
        if len(code) != self.code_size(arch):
            raise InstrumenterError(f"handler {self.spec}: its size depends on where it is "
                                    f"placed ({len(code)} bytes at {code_at:#x})")
        return HandlerImage(code, code_at, b"")

    def _assemble(self, arch: str, address: int) -> bytes:
        try:
            code = assemble(self.source, arch, address)
        except InstrumenterError as e:
            raise InstrumenterError(f"handler {self.spec} ({arch}): {e}") from None
        if not code:
            raise InstrumenterError(f"handler {self.spec}: no instructions")
        return code


def check_handler_of(hook, arch: str) -> None:
    """Refuse a probe whose handler cannot run in `arch` (it does not assemble, or its object is
    built for the other arch) before a strategy patches anything: a refusal leaves no site."""
    handler = handler_of(hook)
    if handler is not None:
        handler.code_size(arch)


def handler_of(hook) -> UserHandler | None:
    """The user handler a strategy must call for `hook`: its probe's, when the probe is an entry
    uprobe (a uretprobe's entry hook, an IFUNC resolver's watch, have none to call)."""
    probe = getattr(hook, "probe", None)
    spec = getattr(probe, "spec", None)
    if spec is None or spec.kind != UPROBE:
        return None
    return getattr(probe, "handler", None)


def load_handler(spec: str, *, fxsave: bool = False) -> UserHandler:
    """`FILE.s` or `FILE.o:SYMBOL` — one-line InstrumenterError when it cannot be used."""
    path, sep, symbol = spec.rpartition(":")
    if not sep or os.path.exists(spec):
        path, symbol = spec, ""
    if path.endswith((".s", ".S", ".asm")) and not symbol:
        try:
            with open(path, encoding="utf-8") as f:
                source = f.read()
        except (OSError, UnicodeDecodeError) as e:
            raise InstrumenterError(f"handler {spec}: {getattr(e, 'strerror', None) or e}") from None
        return UserHandler(spec, fxsave, source=_strip_comments(source))
    if not symbol:
        raise InstrumenterError(f"handler {spec}: expected FILE.s (assembly) or FILE.o:SYMBOL / "
                                "FILE.so:SYMBOL (a function of a relocatable or shared object)")
    from .object_file import load_object    # (pyelftools: only a .o or .so handler reads one)
    return UserHandler(spec, fxsave, obj=load_object(path, symbol))


def _strip_comments(source: str) -> str:
    """keystone takes `;` as a statement separator: drop `#` and `//` comments, keep lines."""
    lines = []
    for line in source.splitlines():
        for mark in ("#", "//"):
            line = line.split(mark, 1)[0]
        lines.append(line.rstrip())
    return "\n".join(lines)
