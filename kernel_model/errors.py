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


class TraceError(KernelError):
    """A tool's request to the tracing facility (kernel_model/debug/tracing/facility.py) that the
    kernel refuses, as ttrace(2) and ptrace(2) return an error to the debugger: resuming a
    thread that is not stopped, masks on a process nobody traces, a second tracer."""


class VforkParentBusy(TraceError):
    """US 7,185,320 [0037]: "continuing the parent process before the child has completed results
    in an error" — a vfork parent lends its address space to its child and may not run until
    the child has exec'd or exited (the vfork-done event)."""

    def __init__(self, message: str, *, parent_pid: int, child_pid: int):
        super().__init__(message)
        self.parent_pid = parent_pid
        self.child_pid = child_pid
