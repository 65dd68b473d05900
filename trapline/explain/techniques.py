"""The techniques `trapline explain --technique` knows, in one table: the name, what it shows, and
the function that runs it and returns its document (document.py).

Each module is imported only when its technique is asked for (capstone, keystone and the
instrumenter are not cheap to import). The four older techniques print text; their lines
become the document (document.from_lines), so their text output is what it always was.
"""
from __future__ import annotations

import importlib
from typing import NamedTuple

from ..errors import UsageError


class Technique(NamedTuple):
    name: str
    module: str
    function: str
    summary: str


TECHNIQUES: tuple[Technique, ...] = (
    Technique("emulate", "trapline.explain", "emulate_document",
              "in-trap emulation: the trap frame and stack words of each emulated instruction "
              "(US 7,350,196)"),
    Technique("trampoline", "trapline.explain.trampoline", "trampoline_document",
              "the trampoline page with its handler, block by block (US 9,336,001)"),
    Technique("relocate", "trapline.explain.relocate", "relocate_document",
              "a function relocated whole, its table, original return pointers (US 6,957,421)"),
    Technique("detach", "trapline.explain.detach", "detach_document",
              "uninstrumenting at any moment: PCs moved, return pointers reset (US 7,017,153)"),
    Technique("jump", "trapline.explain.jump", "explain_jump",
              "the 5-byte jump patch, the relocated instructions, a native count running"),
    Technique("uretprobe", "trapline.explain.uretprobe", "explain_uretprobe",
              "return probes: the return address swapped for the landing, the shadow stack, "
              "tail calls and longjmp"),
    Technique("handler", "trapline.explain.handler", "explain_handler",
              "a user handler in the trampoline page: save, call, restore, copy, jump"),
    Technique("backpatch", "trapline.explain.backpatch", "explain_backpatch",
              "a vfork program under each children policy, the site's bytes at each step, the "
              "naive tool's deadlock (US 7,185,320)"),
    Technique("walkup", "trapline.explain.walkup", "explain_walkup",
              "samples, the hot spot, its identifying hook, callers instrumented level by level "
              "(US 7,823,129)"),
    Technique("singlestep", "trapline.explain.singlestep", "explain_singlestep",
              "restore, TF, #DB, re-insert; the window where another thread is not seen"),
    Technique("singlestep-stopall", "trapline.explain.singlestep", "explain_stopall",
              "single-stepping with every other thread held: the window closed"),
)
BY_NAME = {t.name: t for t in TECHNIQUES}
NAMES = tuple(t.name for t in TECHNIQUES)


def known(name: str) -> Technique:
    technique = BY_NAME.get(name)
    if technique is None:
        raise UsageError(f"explain: unknown technique {name!r} (have: {', '.join(NAMES)})")
    return technique


def build(name: str, arch: str, **options) -> dict:
    """The document of technique `name` on `arch` (options: the ones its function takes)."""
    technique = known(name)
    function = getattr(importlib.import_module(technique.module), technique.function)
    return function(arch, **options)
