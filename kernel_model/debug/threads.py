"""A thread's registers and the exceptions a tool hands back to it (part of the debug
interface, kernel_model/debug/): PTRACE_GETREGS/SETREGS, and force_sig_fault for a trap a tool
claimed but the program caused.

Registers: a thread's registers are live in its Machine while it is the one running there, and
in its saved context otherwise (sleeping, stopped, runnable but switched out, a new child before
its first run) — kernel.py `_switch_to` keeps that invariant: context None <=> registers live.
`read_register`/`write_register` go to whichever holds them.
"""
from emu.exits import FAULT, READ, WRITE, Exit
from emu.registers import REGISTER_IDS

from ..cpu.idt import PF as PAGE_FAULT
from ..errors import KernelError
from ..process.proc import ZOMBIE
from ..signals import SIGSEGV


class ThreadAccess:
    def __init__(self, kernel=None):
        self._kernel = kernel

    def current_thread(self):
        """The thread the kernel runs (whose registers are live): inside an event or a trap
        handler, the one that raised it (the forking thread at fork/vfork)."""
        return self._kernel.current

    def deliver_page_fault(self, frame, thread, ip: int, address: int, *, write: bool,
                           unmapped: bool) -> bool:
        """The instruction at `ip`, which a tool ran on the trapped thread's behalf, would have
        page-faulted at `address`: raise #PF as the CPU would (a fault: the saved IP is the
        instruction, SDM Vol. 3A 6.5), with the error and si_addr the kernel gives it."""
        frame.ip, frame.vector, frame.fault_address = ip, PAGE_FAULT, address
        thread.pending_fault = Exit(FAULT, ip, address=address, access=WRITE if write else READ,
                                    unmapped=unmapped)
        return self._kernel.deliver_exception(frame, SIGSEGV)

    def deliver_exception(self, frame, signal: int) -> bool:
        """The trapped thread gets `signal` for the exception `frame` describes, as the kernel
        would have given it had no tool claimed the trap (force_sig_fault): a tool that finds
        the program itself at fault (an emulated store into an unmapped page) hands it back."""
        return self._kernel.deliver_exception(frame, signal)

    @staticmethod
    def live_threads(process) -> list:
        """The threads of `process` that have not exited (/proc/PID/task)."""
        return [thread for thread in process.threads if thread.state != ZOMBIE]

    @staticmethod
    def read_register(thread, name: str) -> int:
        """`thread`'s register `name` (emu/registers.py names), wherever it lives now: the
        Machine for the running thread, its saved context for any other (module docstring)."""
        context = _register_context(thread)
        if context is None:
            return thread.process.machine.reg(name)
        return context.reg_read(REGISTER_IDS[name])

    @staticmethod
    def write_register(thread, name: str, value: int) -> None:
        """Set `thread`'s register `name`; a thread that is not running resumes with it (its
        saved context is what the kernel restores when it switches the thread in)."""
        context = _register_context(thread)
        if context is None:
            thread.process.machine.set_reg(name, value)
        else:
            context.reg_write(REGISTER_IDS[name], value)


def _register_context(thread):
    """The saved context holding `thread`'s registers, or None when they are live in its
    Machine. An exited thread has neither (its context is not saved when it dies)."""
    if thread.state == ZOMBIE:
        raise KernelError(f"tid {thread.tid} has exited: it has no registers")
    return thread.context
