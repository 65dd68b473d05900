"""The debug interface, "the door": what a tool may observe of the kernel (as ptrace/uprobes
offer). The facade and the specification of its events are kernel_model/debug/facade.py; the
vocabulary a tool imports with it is re-exported here, so that a tool names only
`kernel_model.debug` (and the plain ABI tables of kernel_model/debug/abi.py).
"""
from .facade import (DebugInterface, EventMask, KernelError, MemoryFault,  # noqa: F401
                     PatchConflict, PROT_EXEC, PROT_READ, PROT_WRITE, SyscallRun, TraceError,
                     TraceEvent, TraceOption, TraceStop, TracingFacility, VforkParentBusy)


def __getattr__(name: str):
    """The sampler's vocabulary (CALLEE_SAVED, WALK_REGISTERS, CapturedFrame), imported when
    named: it comes with the timer's C capture, which a run without a timer does without."""
    from . import facade
    return getattr(facade, name)
