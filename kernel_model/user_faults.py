"""CPU exceptions in user code: a page fault's error code, and the signal an exception becomes
(Linux arch/x86/mm/fault.c and arch/x86/kernel/traps.c)."""
from emu import exits

from .cpu import idt as V
from .signals.numbers import signal_name


def page_fault(kernel, thread, exit_: exits.Exit) -> None:
    """Raise #PF for the fault Unicorn reported, through the thread's IDT."""
    # #PF error code (Intel SDM Vol. 3A, 4.7): P=1 protection, W/R=2 write, U/S=4 user, I/D=16 fetch
    code = (0 if exit_.unmapped else 1) | (2 if exit_.access == exits.WRITE else 0) | 4 \
        | (16 if exit_.access == exits.FETCH else 0)
    thread.pending_fault = exit_
    thread.process.space.traps.dispatch(V.PF, exit_.pc, error_code=code,
                                        fault_address=exit_.address)


def deliver_exception(kernel, frame, signal: int) -> bool:
    """A CPU exception in user code becomes a signal for the faulting thread: its handler
    runs when it has one that is neither blocked nor ignored; otherwise the process dies
    (Linux force_sig_fault)."""
    thread = kernel.current
    proc = thread.process
    thread.held_signals = 0          # the faulting instruction gets its signal: no hold keeps it
    fault_address = frame.fault_address if frame.fault_address is not None else frame.ip
    if kernel.debug.stale_code_fault(proc, frame):   # into a detached tool's pages: debug/detach.py
        return True
    blame = kernel.debug.tool_code_fault(proc, frame.ip)
    if blame is not None:        # a tool's code faulted (kernel_model/debug/tool_code.py)
        kernel.kill(proc, signal, f"{blame}: {signal_name(signal)} ({_detail(frame, thread)})")
        return False
    handler = proc.sigactions.get(signal, (0,))[0]
    if handler not in (0, 1) and not thread.sigmask & (1 << (signal - 1)):
        code = 2 if _refused_by_area(proc, thread.pending_fault, fault_address) else 1
        kernel.signals.post(proc, signal, thread=thread, info={"code": code, "addr": fault_address})
        return False
    kernel.kill(proc, signal, f"{_detail(frame, thread)}, pc={frame.ip:#x} "
                              f"({kernel.symbolize(proc, frame.ip)})")
    return False


def _refused_by_area(proc, fault, address: int) -> bool:
    """SEGV_ACCERR rather than SEGV_MAPERR: an area holds the address but refused the access
    (arch/x86/mm/fault.c do_user_addr_fault: bad_area_access_error once find_vma found one).
    A page Unicorn does not map can still be an area's: a PROT_NONE area never touched has no
    pages (kernel_model/memory/vm.py map_area)."""
    if fault is None:
        return False
    return not fault.unmapped or proc.space.vm.vma_at(address) is not None


def _detail(frame, thread) -> str:
    if frame.vector != V.PF:
        return V.NAMES.get(frame.vector, f"vector {frame.vector}")
    fault = thread.pending_fault
    refused = _refused_by_area(thread.process, fault, frame.fault_address)
    what = "not permitted" if refused else "not mapped"
    access = fault.access if fault is not None else "access"
    return f"{access} at {frame.fault_address:#x} ({what})"
