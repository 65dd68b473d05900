"""The kernel's handlers behind the IDT's gates: which handler each vector leads to (Linux
arch/x86/kernel/idt.c def_idts) and install_idt_handlers, which writes the gates. The table's
format and the vector numbers are idt.py.

Exceptions raised by user code become signals (Linux arch/x86/kernel/traps.c): #DE -> SIGFPE,
#UD -> SIGILL, #GP -> SIGSEGV, #PF -> SIGSEGV (or SIGBUS), #BP/#DB -> SIGTRAP. `int 0x80`
is the i386 system-call gate.
"""
from emu import exits

from .cpu import idt as V
from .signals import SIGBUS, SIGFPE, SIGILL, SIGSEGV, SIGTRAP
from .cpu.tsc import emulate_time_stamp

from .memory.file_fault import RETRY, SIGBUS as FILE_SIGBUS, file_page_fault
from .userfaultfd.fault import RETRY as USERFAULT_RETRY, SIGBUS as USERFAULT_SIGBUS, userfault

EXCEPTION_SIGNALS = {
    V.DE: SIGFPE, V.DB: SIGTRAP, V.BP: SIGTRAP, V.OF: SIGSEGV, V.BR: SIGSEGV, V.UD: SIGILL,
    V.NM: SIGSEGV, V.DF: SIGSEGV, V.TS: SIGSEGV, V.NP: SIGBUS, V.SS: SIGBUS, V.GP: SIGSEGV,
    V.PF: SIGSEGV, V.MF: SIGFPE, V.AC: SIGBUS, V.MC: SIGBUS, V.XM: SIGFPE,
}


def install_idt_handlers(kernel, space) -> None:
    """One gate per vector (each set_gate writes a descriptor into the IDT page): the exceptions
    that only become signals, those a tool may claim first, and the system-call gate."""
    handlers = {vector: _exception_handler(kernel, signal)
                for vector, signal in EXCEPTION_SIGNALS.items()}
    handlers[V.BP] = _breakpoint_handler(kernel, space)
    handlers[V.UD] = _invalid_opcode_handler(kernel, space)
    handlers[V.DB] = _debug_handler(kernel, space)
    handlers[V.GP] = _general_protection_handler(kernel, space)
    handlers[V.PF] = _page_fault_handler(kernel, space)
    handlers[V.SYSCALL_VECTOR] = kernel.int80_handler
    for vector, handler in handlers.items():
        dpl = 3 if vector in V.USER_CALLABLE else 0        # int3, into, int 0x80 from ring 3
        space.idt.set_gate(vector, handler, dpl=dpl)


def _breakpoint_handler(kernel, space):
    """#BP: a breakpoint a tool registered (kernel_model/debug/) gets the trap frame first;
    an int3 nobody owns is the program's own: SIGTRAP."""
    def handle(frame):
        handler = kernel.debug.breakpoint_at(space, frame.ip - 1)
        if handler is not None:
            kernel.debug.tool_trap_taken("int3")
            return handler(frame, kernel.current)
        return kernel.deliver_exception(frame, SIGTRAP)
    return handle


def _invalid_opcode_handler(kernel, space):
    """#UD: a LOCK-prefix probe site a tool registered (US 7,350,196) gets the frame first (a
    fault, so frame.ip is the patched address); any other #UD is the program's: SIGILL."""
    def handle(frame):
        handler = kernel.debug.invalid_opcode_site(space, frame.ip)
        if handler is not None:
            kernel.debug.tool_trap_taken("lock_ud")
            return handler(frame, kernel.current)
        return kernel.deliver_exception(frame, SIGILL)
    return handle


def _general_protection_handler(kernel, space):
    """#GP: RDTSC/RDTSCP trapped by CR4.TSD run on the virtual clock (kernel_model/cpu/tsc.py),
    unless the task asked them to fault (PR_TSC_SIGSEGV); any other #GP is the program's: SIGSEGV."""
    def handle(frame):
        # prctl(PR_SET_TSC, PR_TSC_SIGSEGV): the task's RDTSC faults as Linux's TIF_NOTSC makes it
        current = getattr(kernel, "current", None)          # (no task: a bare CPU's #GP)
        if not (current is not None and current.task_flags.tsc_sigsegv) and \
                emulate_time_stamp(space.machine, lambda: kernel.clock, frame):
            return True
        return kernel.deliver_exception(frame, SIGSEGV)
    return handle


def _page_fault_handler(kernel, space):
    """#PF: a fault just below a MAP_GROWSDOWN area grows it and the instruction runs again
    (arch/x86/mm/fault.c do_user_addr_fault -> expand_stack); one in a shared file mapping's
    page-less page reads the page in, or is SIGBUS past the file's end (memory/file_fault.py,
    BUS_ADRERR: deliver_exception's code 2 for an address in an area); one a userfaultfd
    watches goes to its handler thread (userfaultfd/fault.py); any other is SIGSEGV."""
    def handle(frame):
        current = getattr(kernel, "current", None)
        fault = getattr(current, "pending_fault", None)
        if fault is not None and fault.unmapped and frame.fault_address is not None:
            if space.vm.grow_down(frame.fault_address, _stack_limit(current)):
                current.pending_fault = None
                return True
            outcome = file_page_fault(space, kernel.page_cache, frame.fault_address)
            if outcome == RETRY:
                current.pending_fault = None
                return True
            if outcome == FILE_SIGBUS:
                return kernel.deliver_exception(frame, SIGBUS)
        if fault is not None and frame.fault_address is not None and \
                (fault.unmapped or space.userfaults):
            outcome = userfault(space, current, frame.fault_address,
                                fault.access == exits.WRITE, fault.unmapped)
            if outcome == USERFAULT_RETRY:
                current.pending_fault = None
                return True
            if outcome == USERFAULT_SIGBUS:
                return kernel.deliver_exception(frame, SIGBUS)
        return kernel.deliver_exception(frame, SIGSEGV)
    return handle


def _stack_limit(thread) -> int:
    RLIMIT_STACK = 3
    return thread.process.rlimits.get(RLIMIT_STACK, (8 << 20, 0))[0]


def _debug_handler(kernel, space):
    """#DB: a tool single-stepping a thread (TF set in the saved flags) sees the trap first;
    one it does not claim (None) is the program's: SIGTRAP."""
    def handle(frame):
        handler = kernel.debug.debug_trap_handler(space)
        if handler is not None:
            claimed = handler(frame, kernel.current)
            if claimed is not None:
                kernel.debug.tool_trap_taken("step_db")
                return claimed
        return kernel.deliver_exception(frame, SIGTRAP)
    return handle


def _exception_handler(kernel, signal):
    def handle(frame):
        return kernel.deliver_exception(frame, signal)
    return handle
