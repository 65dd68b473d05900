"""The system-call entry paths from the Machine into the dispatcher (dispatch.py): `int 0x80`
with a trap frame (the IDT's handler) or without one, and x86-64 `syscall` from Unicorn's hook
or, deferred, from the run loop. Each turns an exception that is a kernel bug into a
KernelPanic with a report (kernel_model/syscalls/panic.py).

Kept apart from kernel.py, which mixes it into Kernel, because how a call enters the kernel is
one concept and the run loop another; `Kernel.int80_handler` and `Kernel._syscall_instruction`
stay where their callers (idt_handlers.py, debug/syscalls.py) find them.
"""
from .panic import raise_if_kernel_bug
from ..process.proc import Thread


class SyscallEntry:
    def int80_handler(self, frame) -> bool:
        try:
            return self.syscalls.handle(self.current, "i386", frame, in_hook=self.in_hook)
        except Exception as e:           # a kernel bug: KernelPanic with a report (panic.py)
            raise_if_kernel_bug(self.current, "i386", e)
            raise

    def _int80_frameless(self, _frame) -> bool | None:
        """int 0x80 without a trap frame (cpu/traps.py says why that is exact), unless a debug
        watcher looks: it may change registers at the call's entry or exit, which IRET
        would then restore from the frame."""
        if self.debug.syscall_watchers:
            return None
        try:
            return self.syscalls.handle(self.current, "i386", None, in_hook=True)
        except Exception as e:
            raise_if_kernel_bug(self.current, "i386", e)
            raise

    def _on_syscall_instruction(self, pc: int) -> bool:
        return self._syscall_instruction(self.current, pc, in_hook=True)

    def _syscall_instruction(self, thread: Thread, pc: int, *, in_hook: bool) -> bool:
        """x86-64 `syscall`: rcx <- return RIP, r11 <- RFLAGS (Intel SDM Vol. 2B, SYSCALL).
        rcx and r11 are stored through the Machine's register cells (what uc_reg_write does
        for a general register, without a uclib call each: this runs on every syscall)."""
        space = thread.process.space
        if space is not self._syscall_space:
            machine = space.machine
            self._syscall_space = space
            self._syscall_views = (machine.register_cell("rcx"), machine.register_cell("r11"),
                                   space.syscall_registers[2])
        rcx, r11, rflags = self._syscall_views
        rcx.value = pc
        # RFLAGS has no view: QEMU keeps the flags in pieces only its helpers assemble
        r11.value = rflags.read()
        try:
            return self.syscalls.handle(thread, "x86_64", None, in_hook=in_hook)
        except Exception as e:
            raise_if_kernel_bug(thread, "x86_64", e)
            raise
