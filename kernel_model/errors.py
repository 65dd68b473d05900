"""Errors of the modeled kernel.

Guest misbehaviour never raises: it becomes an errno, a signal or the death of the guest.
These exceptions are for the kernel's users (bad configuration) and for broken invariants.
"""
from emu.errors import TraplineError


class KernelError(TraplineError):
    """A request to the kernel model that cannot be honoured (bad rootfs, bad program path...)."""


class KernelPanic(TraplineError):
    """A kernel invariant is broken: a bug in trapline, never the guest's fault."""
