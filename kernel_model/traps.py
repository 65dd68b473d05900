"""Trap dispatch through the IDT, with hardware trap frames and IRET semantics.

What the CPU does on an interrupt or exception (Intel SDM Vol. 3A, 6.12.1), the dispatcher does
on the Machine's behalf: look the vector up in the IDT, build the frame (on the thread's kernel
stack when the trap comes from ring 3, on the current stack otherwise), call the gate's handler
with it, then return as IRET does — from the frame, which the handler may have changed (seed 000
rewrites the saved IP; seed 001 emulates an instruction on it).
"""
from . import idt as vectors
from .errors import KernelPanic
from .trapframe import TrapFrame


class TrapDispatcher:
    def __init__(self, machine, idt, kernel_stack_top):
        """`kernel_stack_top()` gives the top of the current thread's kernel stack."""
        self.machine = machine
        self.idt = idt
        self.kernel_stack_top = kernel_stack_top
        self.word = machine.arch.word
        self._flags = machine.raw_register(machine.arch.flags)
        self._sp = machine.raw_register(machine.arch.sp)
        # One batched read on entry and one on return: this is the path of every int 0x80
        # and int3, where each separate register access costs ~0.5 µs.
        self._entry_state = machine.raw_registers(("cs", machine.arch.flags, machine.arch.sp, "ss"))
        self._return_state = machine.raw_registers((machine.arch.pc, machine.arch.flags, machine.arch.sp))

    def dispatch(self, vector: int, pc: int, *, error_code: int | None = None,
                 fault_address: int | None = None, software: bool | None = None):
        """Deliver `vector` with saved IP `pc`; returns what the handler returns.

        `software`: whether an INT n/INT3/INTO instruction raised it; None asks the Machine
        about the event it last reported (a CPU exception and `int $0` share a vector).
        """
        cs, flags, sp, ss = self._entry_state.read()
        gate = self.idt.gate(vector)
        if software is None:
            software = self.machine.software_interrupt
        if software and gate.dpl < (cs & 3):
            # `int n` through a gate the caller may not use (only software interrupts are
            # checked, SDM 6.12.1.1): #GP with the IDT error code (SDM 6.13: index << 3 |
            # IDT bit (2)); the saved IP is the int instruction itself.
            return self.dispatch(vectors.GP, pc - self._int_length(vector, pc),
                                 error_code=(vector << 3) | 2, software=False)
        handler = self.idt.handler_for(vector)
        if handler is None:
            raise KernelPanic(f"no IDT handler for vector {vector:#x} at pc={pc:#x}")
        if error_code is None and vector in vectors.HAS_ERROR_CODE:
            error_code = 0
        frame = self._push_frame(vector, pc, cs, flags, sp, ss, error_code)
        frame.fault_address = fault_address
        result = handler(frame)
        self._iret(frame)
        return result

    def _int_length(self, vector: int, pc: int) -> int:
        """Length of the instruction that raised software interrupt `vector`, ending at pc:
        int3 (cc) and into (ce) are one byte, `int n` (cd ib) two."""
        if vector in (vectors.BP, vectors.OF):
            if self.machine.mem.read(pc - 1, 1) in (b"\xcc", b"\xce"):
                return 1
        return 2

    def _push_frame(self, vector: int, pc: int, cs: int, flags: int, sp: int, ss: int,
                    error_code: int | None) -> TrapFrame:
        user = (cs & 3) == 3
        push_stack = self.word == 8 or user
        frame = TrapFrame(vector=vector, ip=pc, cs=cs, flags=flags,
                          sp=sp if push_stack else None, ss=ss if push_stack else None,
                          error_code=error_code, word=self.word)
        top = self.kernel_stack_top() if user else sp
        if self.word == 8:
            top &= ~0xF                      # 64-bit mode aligns the new RSP (SDM 6.14.2)
        frame.address = top - frame.size
        self.machine.mem.write(frame.address, frame.pack())
        if not user:
            self._sp.write(frame.address)    # same privilege: the frame is on the live stack
        return frame

    def _iret(self, frame: TrapFrame) -> None:
        """Return as IRET does: IP, flags (and SP) come from the frame (written only where
        they differ from the live registers)."""
        pc, flags, sp = self._return_state.read()
        if frame.ip != pc:
            self.machine.pc = frame.ip
        if frame.flags != flags:
            self._flags.write(frame.flags)
        new_sp = frame.sp if frame.sp is not None else frame.address + frame.size
        if new_sp != sp:
            self._sp.write(new_sp)
