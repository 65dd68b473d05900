"""Trap dispatch through the IDT, with hardware trap frames and IRET semantics.

What the CPU does on an interrupt or exception (Intel SDM Vol. 3A, 6.12.1), the dispatcher does
on the Machine's behalf: look the vector up in the IDT, build the frame (on the thread's kernel
stack when the trap comes from ring 3, on the current stack otherwise), call the gate's handler
with it, then return as IRET does — from the frame, which the handler may have changed (US 9,336,001
rewrites the saved IP; US 7,350,196 emulates an instruction on it).

Breakpoint redirects (the fast path of US 9,336,001's probes). A tool whose #BP handler for an
address does nothing to the trap frame but rewrite its saved IP may register that as a
*redirect* (`set_breakpoint_redirect`). The Machine asks `redirect_breakpoint` about every
int3 before it reports the trap; for an int3 at such an address, raised in ring 3 while the #BP
gate still leads to the handler the redirect was registered under, the redirect runs and the
Machine resumes at the IP it gives, without a frame being materialised. This is exact, because
the frame round trip is the identity on everything but the IP:
  - the gate is present with DPL 3 (checked when registered and on every use), so int3 from
    ring 3 is delivered, not turned into #GP (SDM 6.12.1.1);
  - in ring 3 the CPU pushes SS, ESP, EFLAGS, CS, EIP on the kernel stack (SDM 6.12.1), and
    IRET pops the same five words back (SDM Vol. 2A, IRET: return to outer privilege level):
    with only EIP changed, CS, EFLAGS, ESP and SS end as they were, and the user stack and
    every user register are untouched both ways;
  - the only difference is the frame's five words not being written below the top of the
    thread's kernel stack: memory that is dead between traps (every trap writes its frame
    before anything reads it, and nothing reads it after IRET).
The handler runs with the same live registers either way (the full path does not change them
before calling it). tests/unit/instrumenter/strategies/test_trampoline_fastpath.py checks the two paths
end in the same state.

Native breakpoints (issue 31). A redirect that only runs Python hooks and gives a trampoline
may also be taken by the Machine's C interrupt hook (emu/int3_sites.py, `set_native_breakpoint`):
the same preconditions, kept as state instead of asked per hit. The ring is checked in C (CS's
RPL); the site is in the C table only while its redirect is the one registered here, and all
of them leave it when the #BP gate changes (the Idt tells: `_gate_changed`); a tool's gate on
the space disarms the table (`arm_native_breakpoints`), and the Machine's on_kernel_entry
disarms it while set. Whatever the C hook declines comes to `redirect_breakpoint` as before.

Frameless system calls (the fast path of every `int 0x80`). The same argument holds for the
syscall vector: `int 0x80` from ring 3 through a present DPL-3 gate pushes SS, ESP, EFLAGS,
CS, EIP (SS:RSP always in 64-bit mode, after aligning RSP: SDM 6.14.2) on the kernel stack, and
IRET pops them back; the system-call handler reads its number and arguments from the live
registers and writes its result into eax, none of which the frame holds. So for a call that
does nothing to the frame, the round trip is the identity on everything but memory dead
between traps, and the handler may run with no frame at all (`set_frameless_handler`):
`handler(None)` gives True (done, the guest goes on), False (done, the run loop takes over) or
None, before doing anything, to send this call through the full path. The calls that do touch
the frame say so by being taken outside the hook (execve, fork/vfork/clone, exit, sigreturn:
`outside_hook` in syscalls/registry.py, dispatched later through `dispatch` with a frame);
a call that must be restarted rewinds the live EIP instead of the frame's (the same value
once IRET would have run); signals are delivered by the run loop after the call, from the live
registers either way. The frameless path is taken only from ring 3 and while the gate is the
one registered (a tool that puts its own handler on the vector gets every call with a frame).
tests/unit/kernel_model/cpu/test_frameless_syscalls.py checks that both paths end in the same state.
"""
from . import idt as vectors
from ..errors import KernelPanic
from .trapframe import TrapFrame


class TrapDispatcher:
    fast_breakpoints = True     # False: every int3 takes the full path (the equivalence tests)
    frameless_calls = True      # False: every int 0x80 takes the full path (the same tests)

    def __init__(self, machine, idt, kernel_stack_top):
        """`kernel_stack_top()` gives the top of the current thread's kernel stack."""
        self.machine = machine
        self.idt = idt
        self.kernel_stack_top = kernel_stack_top
        self.word = machine.arch.word
        self._flags = machine.raw_register(machine.arch.flags)
        self._sp = machine.raw_register(machine.arch.sp)
        # One batched read on entry and one on return: this is the path of every int 0x80
        # and int3, where each separate register access is a ctypes call (docs/unicorn.md).
        self._entry_state = machine.raw_registers(("cs", machine.arch.flags, machine.arch.sp, "ss"))
        self._return_state = machine.raw_registers((machine.arch.pc, machine.arch.flags, machine.arch.sp))
        self._cs = machine.register_cell("cs")    # the redirect's ring check, once per hit
        # address of an int3 -> (redirect() -> new IP, the #BP gate it stands in for)
        self._redirects: dict[int, tuple] = {}
        self._idt_gates = idt.decoded_gates     # what idt.gate(BP) finds first, per hit
        # the syscall vector's handler without a frame, and the gate it stands in for
        self._frameless = self._frameless_gate = None

    # ---- breakpoint redirects (see the module docstring) -----------------------------------
    def set_breakpoint_redirect(self, address: int, redirect) -> None:
        """`redirect()` returns the IP the #BP handler would write into the frame of the int3
        at `address` (it may record the hit on the way), or None, before doing anything, to
        send this hit through the full path; the handler must do nothing else."""
        gate = self.idt.gate(vectors.BP)
        if self.idt.handler_for(vectors.BP) is None or gate.dpl != 3:
            raise KernelPanic("breakpoint redirect without a user-callable #BP gate")
        # The Idt decodes a new Gate on every set_gate: while gate(BP) is this very object,
        # the #BP gate (present, DPL 3, its handler) is the one checked here.
        self._redirects[address] = (redirect, gate)
        self.clear_native_breakpoint(address)      # a new redirect: the C table's was another

    def clear_breakpoint_redirect(self, address: int) -> None:
        self._redirects.pop(address, None)
        self.clear_native_breakpoint(address)

    # ---- native breakpoints (see the module docstring) ------------------------------------
    native_breakpoints = True   # False: no int3 is taken by the C hook (read when one is set)

    def set_native_breakpoint(self, address: int, redirect, hit, count=None) -> bool:
        """`set_breakpoint_redirect(address, redirect)`, and let the Machine's C interrupt hook
        call `hit()` for this int3 instead: it must do what `redirect()` does when it does not
        decline, catch its own exceptions (`native_failed`, then 0) and give the IP; the hits
        that gave one are added to `count` (a ctypes.c_uint64 the caller keeps), if given.
        False: the C hook is not available here (or not wanted): the Python redirect takes
        the hits."""
        self.set_breakpoint_redirect(address, redirect)
        if not (self.fast_breakpoints and self.native_breakpoints):
            return False
        sites = self.machine.int3_sites()
        if sites is None:
            return False
        if self.idt.on_gate_change is None:
            self.idt.on_gate_change = self._gate_changed
        return sites.set(address, hit, count)

    def clear_native_breakpoint(self, address: int) -> None:
        sites = self.machine.int3_sites(make=False)
        if sites is not None:
            sites.clear(address)

    def native_failed(self, error: BaseException) -> None:
        """A native breakpoint's hit raised: as the Python hook does with it."""
        self.machine.int3_sites().failed(error)

    def arm_native_breakpoints(self, armed: bool) -> None:
        """False while a tool must see every int3 of the space first (a gate on it)."""
        sites = self.machine.int3_sites(make=False)
        if sites is not None:
            sites.armed = armed

    def _gate_changed(self, vector: int) -> None:
        """The Idt set a gate: a new #BP gate is not the one any redirect was set under."""
        if vector == vectors.BP:
            sites = self.machine.int3_sites(make=False)
            if sites is not None:
                sites.clear_all()

    def redirect_breakpoint(self, pc: int) -> int | None:
        """The fast path of an int3 that ended at `pc` (the Machine asks before it reports the
        trap): the IP to resume at, or None to deliver #BP through the IDT."""
        entry = self._redirects.get(pc - 1)
        if entry is None or not self.fast_breakpoints:
            return None
        redirect, gate = entry
        # idt.gate(BP) without the call: the gate registered came from the Idt's decoded
        # cache (a gate it re-read from memory is a new object, never `gate`), so the cached
        # entry being this very object is the same question, one call fewer per hit
        if self._cs.value & 3 != 3 or self._idt_gates.get(vectors.BP) is not gate:
            return None
        return redirect()

    # ---- frameless system calls (see the module docstring) --------------------------------
    def set_frameless_handler(self, vector: int, handler) -> None:
        """Let the Machine hand every `int vector` from ring 3 to `handler(None)` while the
        gate of `vector` is the present DPL-3 one it is now (the Idt decodes a new Gate on
        every set_gate, so identity is the check)."""
        gate = self.idt.gate(vector)
        if self.idt.handler_for(vector) is None or gate.dpl != 3:
            raise KernelPanic(f"frameless handler without a user-callable gate for {vector:#x}")
        self._frameless, self._frameless_gate = handler, gate
        self.machine.set_fast_interrupt(vector, self._frameless_call)

    def _frameless_call(self, vector: int):
        """True/False: the call was handled without a frame (False ends the run); None:
        deliver it through the IDT."""
        if not self.frameless_calls or self._cs.value & 3 != 3 \
                or self.idt.gate(vector) is not self._frameless_gate:
            return None
        return self._frameless(None)

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
