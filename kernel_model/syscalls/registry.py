"""Syscall implementations register here by name; the per-ABI tables map numbers to names.

An implementation is `fn(ctx, *args) -> int` taking the raw argument words and returning the
guest-visible result (>= 0) or raising GuestErrno. `outside_hook=True` marks calls that change
the address-space layout or the running program (munmap, mprotect, execve, exit...): Unicorn
must not be inside emu_start when they run (UNICORN_FACTS.md item 8), so the dispatcher
defers them to the kernel's run loop.
"""
from dataclasses import dataclass
from typing import Callable

from emu.errors import InternalError


@dataclass(frozen=True)
class SyscallDef:
    name: str
    fn: Callable
    outside_hook: bool = False
    nargs: int = 6


IMPLEMENTATIONS: dict[str, SyscallDef] = {}


def syscall(*names: str, outside_hook: bool = False):
    """Register the decorated function under one or more syscall names."""
    def register(fn):
        nargs = fn.__code__.co_argcount - 1
        for name in names:
            if name in IMPLEMENTATIONS:
                raise InternalError(f"syscall {name} registered twice")
            IMPLEMENTATIONS[name] = SyscallDef(name, fn, outside_hook, nargs)
        return fn
    return register
