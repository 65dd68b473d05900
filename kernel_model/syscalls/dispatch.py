"""System-call dispatch: registers -> number and arguments -> implementation -> result.

ABIs (Linux arch/x86/entry/): i386 `int 0x80` passes the number in eax and arguments in
ebx, ecx, edx, esi, edi, ebp; x86-64 `syscall` uses rax and rdi, rsi, rdx, r10, r8, r9. The
result goes back in eax/rax, negative errno on failure. `int 0x80` from 64-bit code still uses
the i386 table and registers, as on Linux with IA32 emulation.
"""
from . import impls  # noqa: F401  (registers every implementation)
from . import numbers_i386, numbers_x86_64
from .. import errno as E
from ..blocking import WouldBlock
from ..errno import GuestErrno
from ..pipe import BrokenPipe
from ..signals import SIGPIPE
from .context import SyscallContext
from .registry import IMPLEMENTATIONS

NUMBERS = {"i386": numbers_i386.NUMBERS, "x86_64": numbers_x86_64.NUMBERS}


# Calls that install a temporary signal mask and keep it until a handler runs.
KEEPS_SAVED_MASK = frozenset({"rt_sigsuspend", "sigsuspend"})


class NoReturn:
    """Returned by calls after which the caller's registers must not be touched (exit, execve)."""


NO_RETURN = NoReturn()
# Calls after which the thread is gone: no syscall exit to report (Linux's sys_exit tracepoint
# does not fire for them either; strace prints `= ?`).
ENDS_THE_THREAD = frozenset({"exit", "exit_group"})


class SyscallDispatcher:
    def __init__(self, kernel):
        self.kernel = kernel
        # Per ABI: number -> (name, implementation or None), resolved once.
        self.tables = {abi: {nr: (name, IMPLEMENTATIONS.get(name)) for nr, name in numbers.items()}
                       for abi, numbers in NUMBERS.items()}

    def handle(self, thread, abi: str, frame, *, in_hook: bool) -> bool:
        """Run the call in `thread`'s registers. False: the run loop must take over."""
        regs, result_reg = thread.process.space.syscall_abi_registers(abi)
        values = regs.read()
        if abi == "i386":
            mask = 0xFFFFFFFF
            nr, args = values[0] & mask, [v & mask for v in values[1:]]
        else:
            mask = (1 << 64) - 1
            nr, args = values[0], values[1:]
        name, impl = self.tables[abi].get(nr, (None, None))
        if impl is not None and impl.outside_hook and in_hook:
            thread.deferred = True
            return False
        ctx = SyscallContext(self.kernel, thread, abi)
        ctx.frame = frame
        self.kernel.clock.tick_syscall()
        tracer = self.kernel.tracer
        pre = tracer.before(ctx, name or f"syscall_{nr:#x}", args) if tracer else None
        watchers = self.kernel.debug.syscall_watchers
        if watchers and not thread.restart:
            self.kernel.debug.syscall_entry(thread, name or f"syscall_{nr:#x}", args)
        if impl is None:
            result = -E.ENOSYS
            self.kernel.report_unimplemented(thread.process, name or f"syscall_{nr:#x}", nr)
        else:
            try:
                result = impl.fn(ctx, *args[:impl.nargs])
            except BrokenPipe as e:
                # Linux pipe_write: EPIPE, and SIGPIPE to the writer (send_sig(SIGPIPE, current)).
                self.kernel.signals.post(thread.process, SIGPIPE, thread=thread)
                result = -e.errno
            except GuestErrno as e:
                result = -e.errno
            except WouldBlock as blocked:
                self._restart_later(thread, frame, blocked, name)
                return False
        if thread.restart:
            thread.restart.clear()
        thread.blocked_call = None
        if thread.saved_sigmask is not None and name not in KEEPS_SAVED_MASK:
            thread.sigmask, thread.saved_sigmask = thread.saved_sigmask, None
        if result is not NO_RETURN:
            result_reg.write(result & mask)
        if tracer:
            tracer.after(ctx, name or f"syscall_{nr:#x}", args, result, pre)
        if watchers and name not in ENDS_THE_THREAD:
            if result is NO_RETURN:
                # sigreturn's result is the restored eax/rax, execve's the new image's (0),
                # as Linux's sys_exit reports them: what the thread's register holds now.
                result = thread.process.space.syscall_abi_registers(abi)[1].read() & mask
            self.kernel.debug.syscall_exit(thread, name or f"syscall_{nr:#x}", args, result)
        return self.kernel.may_continue(thread)

    def _restart_later(self, thread, frame, blocked: WouldBlock, name: str) -> None:
        """Sleep, then execute the same call again: rewind to the `int 0x80`/`syscall`
        instruction (both 2 bytes) with the call number still in eax/rax."""
        if frame is not None:
            frame.ip -= 2
        else:
            machine = thread.process.machine
            machine.pc = machine.pc - 2
        self.kernel.block(thread, blocked, name)
