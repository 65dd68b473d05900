"""A Python exception escaping the kernel model becomes a KernelPanic with a report.

A guest never gets a Python traceback for its own misbehaviour: bad pointers, flags or numbers
are an errno or a signal (docs/ARCHITECTURE.md, rules). An exception that still escapes a syscall or the
run loop is a bug in trapline, and the report says where to look: the call (name, number, the
six argument words as the calling ABI saw them), the exception, and the innermost frames of
the kernel model where it was raised — as Linux's oops names the task, the syscall and RIP.

Errors that are already trapline's own pass through unchanged (a KernelPanic, a tool's error
from a debug callback, Deadlock...): only a MachineError (the emulator refused what the kernel
model asked of it, e.g. a MemoryAccessError from a raw memory access an implementation did not
check) and plain Python exceptions are a kernel bug.
"""

from emu.errors import MachineError, TraplineError

from .errors import KernelPanic

FRAMES_SHOWN = 3        # innermost frames of the traceback in the report


def is_kernel_bug(exc: BaseException) -> bool:
    """True for an exception that must become a KernelPanic (module docstring)."""
    if isinstance(exc, KernelPanic) or not isinstance(exc, Exception):
        return False            # KeyboardInterrupt, SystemExit... are not the guest's doing
    return isinstance(exc, MachineError) or not isinstance(exc, TraplineError)


def where(exc: BaseException) -> str:
    """`file:line in function` for the innermost FRAMES_SHOWN frames of trapline's own code
    (a library's frames below them, e.g. Unicorn's binding, say less), innermost first."""
    import traceback            # a panic's report only: not imported by every start
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if _short(f.filename) != f.filename] or frames
    shown = ours[-FRAMES_SHOWN:]
    text = " <- ".join(f"{_short(f.filename)}:{f.lineno} in {f.name}" for f in reversed(shown))
    if frames and frames[-1] is not shown[-1]:
        text += f" (raised in {frames[-1].name} of {frames[-1].filename.rsplit('/', 1)[-1]})"
    return text


def _short(filename: str) -> str:
    for root in ("kernel_model/", "emu/", "loader/", "instrumenter/"):
        if root in filename:
            return root + filename.rsplit(root, 1)[1]
    return filename


def run_loop_panic(thread, exc: Exception, doing: str) -> KernelPanic:
    """The KernelPanic for `exc` escaping the run loop while `doing` (a page fault, signal
    delivery...) for `thread`."""
    tid = getattr(thread, "tid", "?")
    return KernelPanic(f"kernel bug while {doing} for tid {tid}: "
                       f"{type(exc).__name__}: {exc} at {where(exc)}")
