"""Hooks registered through uclib with bare ctypes callbacks, and what their failures do.

On the paths of every probe hit and system call, the binding's Python wrapper around a hook
costs more than the hook's own work (docs/unicorn.md), so the Machine's interrupt and `syscall`
hooks are registered here directly. Such a callback catches its own exceptions and hands them to
`hook_failed`, which does what the binding's wrapper would: a wrapper doing it would cost a
call more on every event. The binding's private parts this needs are in internals/binding.py.
"""
import ctypes

from unicorn import UC_ERR_OK, UcError

from .errors import MachineError
from .internals.binding import handle, keep_hook_exception, uc_hook_h, uclib


def add_raw_hook(uc, kind: int, prototype, callback, *extra):
    """Register `callback` for hook `kind` with a bare ctypes function of `prototype`
    (`extra`: the instruction of a UC_HOOK_INSN). Returns the ctypes function, which the
    caller keeps referenced: Unicorn holds only the pointer; its `hook_handle` is the hook's
    uc_hook_h, for uc_hook_del."""
    function = prototype(callback)
    hook = uc_hook_h()
    status = uclib.uc_hook_add(handle(uc), ctypes.byref(hook), kind, function, None,
                               ctypes.c_uint64(1), ctypes.c_uint64(0), *extra)
    if status != UC_ERR_OK:
        raise MachineError(f"cannot add hook {kind}: {UcError(status)}")
    function.hook_handle = hook
    return function


def hook_failed(uc, error: BaseException) -> None:
    """What the binding does with an exception raised in a hook: keep it on the Uc
    (emu_start re-raises it, Machine._run too) and stop the run."""
    keep_hook_exception(uc, error)
