"""The debug interface, "the door": what a tool may observe of the kernel (as ptrace/uprobes
offer). The facade and the specification of its events are kernel_model/debug/facade.py; the
vocabulary a tool imports with it is re-exported here, so that a tool names only
`kernel_model.debug` (and the plain ABI tables of kernel_model/debug/abi.py).
"""
from .facade import (DebugInterface, KernelError, MemoryFault, PROT_EXEC, PROT_READ,  # noqa: F401
                     PROT_WRITE, TraceError, VforkParentBusy)


def __getattr__(name: str):
    """The rest of the vocabulary (EventMask, TraceEvent, TraceOption, TraceStop,
    TracingFacility, PatchConflict, SyscallRun; the sampler's CALLEE_SAVED, WALK_REGISTERS,
    CapturedFrame, which come with the timer's C capture), imported when named: a run no tool
    watches does without their modules (facade.py)."""
    from . import facade
    return getattr(facade, name)
