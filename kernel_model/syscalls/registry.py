"""Syscall implementations register here by name, each with its one declaration; the per-ABI
tables map numbers to names.

An implementation is `fn(ctx, *args) -> int` taking the raw argument words and returning the
guest-visible result (>= 0) or raising GuestErrno. Its decorator is the call's declaration
(issue 15: one declaration feeds the dispatcher, strace and the implementation):

    @syscall("read", args=(("fd", K.FD), ("buf", K.BUF_OUT), ("count", K.ULONG)))

  args          the arguments' names and kinds (kinds.py), as the man page lists them; None
                when the call is not decoded (strace prints six raw words, as it does for the
                calls it cannot decode);
  i386          the i386 list where that ABI passes the arguments differently (a 64-bit
                offset split over two registers: pread64);
  returns       how the result is shown (kinds.Ret);
  outside_hook  the call changes the address-space layout or the running program (munmap,
                mprotect, execve, exit...): Unicorn must not be inside emu_start when it runs
                (docs/unicorn.md item 8), so the dispatcher defers it to the kernel's run loop.

The implementation reads a prefix of the longest declared list (connect fails on its
descriptor before it reads the address); registering checks that, and that no name is
registered twice.

Lazily: a module of impls/ is imported when one of its calls is first looked up
(`declaration`, homes.py says which module), so a run imports the calls it makes. IMPLEMENTATIONS
holds what has been registered so far; `all_declarations()` imports every module first.
"""
import importlib
from dataclasses import dataclass
from typing import Callable

from emu.errors import InternalError

from .homes import HOMES, MODULES
from .kinds import Kind, Ret

Args = tuple[tuple[str, Kind], ...]


@dataclass(frozen=True)
class SyscallDef:
    """One call's declaration: its implementation, arguments and result kind (module docstring)."""
    name: str
    fn: Callable
    outside_hook: bool = False
    nargs: int = 6                    # the argument words the implementation reads
    args: Args | None = None
    i386: Args | None = None
    returns: Ret = Ret.INT

    def args_for(self, abi: str) -> Args | None:
        """The declared arguments under `abi` ("x86_64" or "i386")."""
        return self.i386 if abi == "i386" and self.i386 is not None else self.args


IMPLEMENTATIONS: dict[str, SyscallDef] = {}


class NoReturn:
    """Returned by calls after which the caller's registers must not be touched (exit, execve)."""


NO_RETURN = NoReturn()


def syscall(*names: str, args: Args | None = None, i386: Args | None = None,
            returns: Ret = Ret.INT, outside_hook: bool = False):
    """Register the decorated function under one or more syscall names sharing a declaration;
    a function serving calls declared differently carries one decorator per declaration."""
    def register(fn):
        nargs = fn.__code__.co_argcount - 1
        _check_declaration(names, fn, nargs, args, i386)
        for name in names:
            if name in IMPLEMENTATIONS:
                raise InternalError(f"syscall {name} registered twice")
            IMPLEMENTATIONS[name] = SyscallDef(name, fn, outside_hook, nargs, args, i386, returns)
        return fn
    return register


def _check_declaration(names, fn, nargs: int, args: Args | None, i386: Args | None) -> None:
    declared = [a for a in (args, i386) if a is not None]
    if i386 is not None and args is None:
        raise InternalError(f"syscall {names[0]}: an i386 list without the common one")
    for arguments in declared:
        if len(arguments) > 6 or not all(isinstance(kind, Kind) for _, kind in arguments):
            raise InternalError(f"syscall {names[0]}: a declaration is up to six (name, Kind)")
    if declared and nargs > max(map(words, declared)):
        raise InternalError(f"syscall {names[0]}: {fn.__name__} reads {nargs} words, "
                            f"its declaration has {max(map(words, declared))}")


def words(arguments: Args) -> int:
    """The argument registers `arguments` take: an i386 64-bit offset takes two."""
    return sum(2 if kind is Kind.OFFSET64_SPLIT else 1 for _, kind in arguments)


def declaration(name: str) -> SyscallDef | None:
    """The declaration of syscall `name`, or None for a call the kernel does not implement;
    its module is imported (and registers its calls) the first time one of them is asked for."""
    declared = IMPLEMENTATIONS.get(name)
    if declared is None and name in HOMES:
        importlib.import_module(f"{__package__}.impls.{HOMES[name]}")
        declared = IMPLEMENTATIONS.get(name)
    return declared


def all_declarations() -> dict[str, SyscallDef]:
    """Every implemented call by name (each module of impls/ imported)."""
    for module in MODULES:
        importlib.import_module(f"{__package__}.impls.{module}")
    return IMPLEMENTATIONS


def signature(name: str, abi: str = "x86_64") -> Args | None:
    """The arguments syscall `name` is declared with under `abi`; None when it is not decoded
    (or not implemented): strace then prints the raw words."""
    declared = declaration(name)
    return None if declared is None else declared.args_for(abi)


def return_kind(name: str) -> Ret:
    declared = declaration(name)
    return Ret.INT if declared is None else declared.returns
