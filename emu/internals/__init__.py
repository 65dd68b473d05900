"""Unicorn's private parts, all in one place: every field of Unicorn's own structures and every
private part of its Python binding that trapline relies on, where each is, how it is located,
and what each use does when it is not where it was verified (unicorn==2.1.4, pinned in
setup.cfg: a 2.1.x update could move any of them).

| private part                  | file          | used by (for)                   | fallback (public API)  |
|-------------------------------|---------------|---------------------------------|------------------------|
| uc._uch, uc._hook_exception,  | binding.py    | raw hooks and bare uclib calls  | none: check() names    |
| uc._mode, the finalizer,      |               | on the paths of every probe hit | what is missing        |
| uclib, the hooks' prototypes  |               | and syscall                     |                        |
| CPUX86State regs[], eip,      | cpu_env.py    | cpu_state.py (the int3 path,    | registers through      |
| segs[CS].selector             |               | syscall arguments)              | uclib calls            |
| uc_struct.emu_counter         | uc_struct.py  | icount.py (instruction counts)  | a code hook counting   |
| uc_struct.invalid_addr        | uc_struct.py  | tlb.py (the exact fault address)| Unicorn's own checks + |
|                               |               |                                 | UC_HOOK_MEM_* hooks    |
| env.exception_is_int          | uc_context.py | errata.py (int n or exception?) | a code hook: where the |
|                               |               |                                 | last insn began        |
| env.old_exception             | uc_context.py | errata.py (fault chaining)      | none: a chained fault  |
|                               |               |                                 | is refused (errata.py) |

Every field is located once per host process, by the first Machine (located()): found by
diffing Unicorn's state around known events, then confirmed with other values (confirmed()
asks the same of a layout given from elsewhere, on fresh Ucs: the one an earlier process kept
on disk for the same library, layout_cache.py, is taken only when every field is confirmed).
A field that is not found or not confirmed is None, and its user takes the fallback: slower,
never wrong. Nothing here reads memory it has not confirmed: scans go through /proc/self/mem
(procmem.py), where a wrong address reads nothing instead of crashing.
"""
import functools
from dataclasses import dataclass, field

from . import binding, cpu_env, uc_context, uc_struct
from .cpu_env import EnvLayout

BITS = (32, 64)


@dataclass(frozen=True)
class Layout:
    """Where each private field is; None: not located, its user falls back."""
    cpu_env: EnvLayout | None = None
    emu_counter: int | None = None
    invalid_addr: int | None = None
    old_exception: dict = field(default_factory=lambda: dict.fromkeys(BITS))      # bits -> offset
    exception_is_int: dict = field(default_factory=lambda: dict.fromkeys(BITS))   # bits -> offset

    def missing(self) -> list[str]:
        """The fields not located (their users run on their fallbacks)."""
        names = [name for name in ("cpu_env", "emu_counter", "invalid_addr")
                 if getattr(self, name) is None]
        for name in ("old_exception", "exception_is_int"):
            names += [f"{name}/{bits}" for bits in BITS if getattr(self, name)[bits] is None]
        return names


NOTHING = Layout()          # every use on its fallback


@functools.cache
def located() -> Layout:
    """The layout of this process's Unicorn, found and confirmed once (the first Machine asks,
    before any hook can need it): the one an earlier process found for the same library when
    every field of it is confirmed here (layout_cache.py), else located afresh and kept.
    Raises UnicornInternalsError only for the binding, which has no fallback."""
    binding.check()
    from . import layout_cache
    kept = layout_cache.load(Layout)
    if kept is not None and confirmed(kept) == kept:
        return kept
    layout = locate_all()
    layout_cache.store(layout)
    return layout


def locate_all() -> Layout:
    """Every field, found by experiment in this process."""
    emu_counter, invalid_addr = uc_struct.locate()
    context = {bits: uc_context.locate(bits) for bits in BITS}
    return Layout(
        cpu_env=cpu_env.locate(), emu_counter=emu_counter, invalid_addr=invalid_addr,
        old_exception={bits: context[bits][0] for bits in BITS},
        exception_is_int={bits: context[bits][1] for bits in BITS})


def confirmed(layout: Layout) -> Layout:
    """`layout` with every field that a fresh experiment does not confirm set to None."""
    env = layout.cpu_env if layout.cpu_env is not None and cpu_env.confirm(layout.cpu_env) \
        else None
    emu_counter, invalid_addr = uc_struct.confirm(layout.emu_counter, layout.invalid_addr)
    context = {bits: uc_context.confirm(bits, layout.old_exception[bits],
                                        layout.exception_is_int[bits]) for bits in BITS}
    return Layout(cpu_env=env, emu_counter=emu_counter, invalid_addr=invalid_addr,
                  old_exception={bits: context[bits][0] for bits in BITS},
                  exception_is_int={bits: context[bits][1] for bits in BITS})
