"""Errors of the modeled kernel.

Guest misbehaviour never raises: it becomes an errno, a signal or the death of the guest.
These exceptions are for the kernel's users (bad configuration) and for broken invariants.
"""
from emu.errors import InternalError, TraplineError


class KernelError(TraplineError):
    """A request to the kernel model that cannot be honoured (bad rootfs, bad program path...)."""


class ExecFailed(KernelError):
    """The first program could not be executed: `errno` is what execve answered (ENOENT for
    a missing file, EACCES, ENOEXEC, ELIBBAD...)."""

    def __init__(self, message: str, errno: int):
        super().__init__(message)
        self.errno = errno


class KernelPanic(InternalError):
    """A kernel invariant is broken: a bug in trapline, never the guest's fault."""
