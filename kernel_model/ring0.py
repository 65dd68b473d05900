"""Bare guests: one function run on its own, as kernel code at CPL 0 (or, for comparison, at
CPL 3), with no process around it — the setting of US 7,350,196's figures 4A-6B.

A kernel function traps at the SAME privilege level: the CPU pushes EFLAGS, CS and EIP on the
very stack the function is using, and no ESP/SS (Intel SDM Vol. 3A, 6.12.1, Figure 6-4), so a
handler that emulates `push %ebp` or `pop %ebp` has to shift the frame it returns through
(instrumenter/strategies/emulate/kernel.py). In 64-bit mode the CPU aligns RSP to 16 and pushes SS:RSP on
every trap (SDM 6.14.2): the trap dispatcher (cpu/traps.py) already models both.

Unicorn has no paging, so no page is "supervisor only": what makes the loaded code kernel code
is the privilege it runs at — CS and SS are the GDT's ring-0 selectors (cpu/gdt.py) and the stack
is a kernel stack of the Space (memory/layout.py `kstacks`). A user-mode guest gets Linux's user
selectors through a privilege-changing IRET (memory/space.py `enter_user_mode`) and a stack at the
top of user space; its traps then land on the kernel stack with SS:ESP, as for any process.

The function is called the way its ABI says (SysV i386: arguments on the stack; x86-64 psABI:
rdi, rsi, rdx, rcx, r8, r9) with the return address of a sentinel `int3` outside it: when that
breakpoint traps, the call has returned and eax/rax holds the result.
"""
import struct

from emu import exits

from .cpu import idt as V
from .debug.cpu import SpaceCpu
from .errors import KernelError
from .process.exec import map_segments
from .memory.space import Space
from .memory.vm import PROT_EXEC, PROT_READ, PROT_WRITE

INT3 = b"\xcc"
ARGUMENT_REGISTERS = ("rdi", "rsi", "rdx", "rcx", "r8", "r9")      # x86-64 psABI 3.2.3
KERNEL_STACK_SLOT = 1          # slot 0 of the Space's kernel stacks takes ring-3 traps
USER_STACK_PAGES = 4
RESULT_REGISTER = {"i386": "eax", "x86_64": "rax"}
DEFAULT_MAX_INSNS = 50_000_000


class BareGuest:
    """A Space that runs one function at CPL `ring` (0: kernel code, 3: user code).

    Tools patch code with `write_code` and claim traps with `on_breakpoint[address]` (the int3
    address) and `on_invalid_opcode[address]` (a LOCK-prefix site, after `arm_lock_site`);
    each handler gets the TrapFrame and returns True to resume from it.
    """

    def __init__(self, arch: str, *, ring: int = 0):
        if ring not in (0, 3):
            raise KernelError(f"a bare guest runs at ring 0 or 3, not {ring}")
        self.arch, self.ring = arch, ring
        self.space = Space(arch)
        self.machine = self.space.machine
        self._cpu = None
        self.word = self.machine.arch.word
        self.symbols = None
        self.on_breakpoint: dict[int, object] = {}
        self.on_invalid_opcode: dict[int, object] = {}
        self.unexpected: list[tuple[int, int]] = []          # (vector, saved ip) nobody claimed
        self.stack_top = self._map_stack()
        self.return_address = self._map_sentinel()
        self._install_gates()

    # ---- memory ------------------------------------------------------------------------------
    def _map_stack(self) -> int:
        if self.ring == 0:
            return self.space.kstack_top(KERNEL_STACK_SLOT)
        lay = self.space.layout
        size = USER_STACK_PAGES * 0x1000
        self.space.vm.map_area(lay.stack_top - size, size, PROT_READ | PROT_WRITE, name=b"[stack]")
        return lay.stack_top

    def _map_sentinel(self) -> int:
        """One executable page holding int3: the return address every call is given."""
        address = self.space.layout.mmap_base - 0x1000
        self.space.vm.map_area(address, 0x1000, PROT_READ | PROT_EXEC, name=b"[return]", data=INT3)
        return address

    def load_image(self, image) -> None:
        """Map a LoadedImage's PT_LOAD segments (its symbols become `self.symbols`)."""
        if image.arch != self.arch:
            raise KernelError(f"{image.path} is {image.arch}, this guest is {self.arch}")
        map_segments(self.space, image, image.path.encode())
        self.symbols = image.symbols

    def load_code(self, address: int, code: bytes) -> None:
        """Map raw machine code at `address` (page aligned), readable and executable."""
        self.space.vm.map_area(address, len(code), PROT_READ | PROT_EXEC, name=b"[code]", data=code)

    def cpu(self):
        """The guest's CPU and memory as a tool sees them (kernel_model/debug/cpu.py)."""
        if self._cpu is None:
            self._cpu = SpaceCpu(self.space)
        return self._cpu

    def read(self, address: int, size: int) -> bytes:
        return self.machine.mem.read(address, size)

    def write_code(self, address: int, data: bytes) -> None:
        """Patch code; Memory.write drops the stale translations of executable ranges."""
        self.machine.mem.write(address, data)

    def arm_lock_site(self, address: int) -> None:
        """Make a LOCK byte at `address` raise #UD (emu/machine.py trap_lock_prefix); call it
        BEFORE writing the patch."""
        self.machine.trap_lock_prefix(address)

    def words(self, address: int, count: int) -> list[int]:
        fmt = "<%d%s" % (count, "I" if self.word == 4 else "Q")
        return list(struct.unpack(fmt, self.read(address, count * self.word)))

    # ---- traps -------------------------------------------------------------------------------
    def _install_gates(self) -> None:
        for vector in (V.DE, V.DB, V.OF, V.BR, V.NM, V.DF, V.TS, V.NP, V.SS, V.GP, V.PF, V.MF,
                       V.AC, V.XM):
            self.space.idt.set_gate(vector, self._unclaimed)
        # #BP is callable from ring 3 (Linux arch/x86/kernel/idt.c: DPL 3), as int3 must be.
        self.space.idt.set_gate(V.BP, self._breakpoint, dpl=3)
        self.space.idt.set_gate(V.UD, self._invalid_opcode)

    def _breakpoint(self, frame) -> bool:
        address = frame.ip - 1                      # #BP is a trap: the saved IP follows int3
        if address == self.return_address:
            return False                            # the call returned: end the run here
        handler = self.on_breakpoint.get(address)
        return handler(frame) if handler is not None else self._unclaimed(frame)

    def _invalid_opcode(self, frame) -> bool:
        handler = self.on_invalid_opcode.get(frame.ip)   # #UD is a fault: IP is the site
        return handler(frame) if handler is not None else self._unclaimed(frame)

    def _unclaimed(self, frame) -> bool:
        self.unexpected.append((frame.vector, frame.ip))
        return False

    # ---- calling -----------------------------------------------------------------------------
    def function(self, name: str) -> int:
        symbol = self.symbols.lookup(name) if self.symbols is not None else None
        if symbol is None or symbol.kind != "func":
            raise KernelError(f"no function named {name!r} in the loaded image")
        return symbol.addr

    def enter(self, pc: int, sp: int) -> None:
        """Be at CPL `ring` with the ring's selectors, about to run `pc` on stack `sp`."""
        m = self.machine
        if self.ring == 0:
            sel = self.space.selectors
            m.set_reg("cs", sel.kernel_cs)
            m.set_reg("ss", sel.kernel_ds)
        elif m.reg("cs") & 3 != 3:      # the first time: drop to ring 3 by IRET
            self.space.enter_user_mode(pc, sp, kstack_top=self.space.kstack_top(0))
        m.sp = sp                        # (a ring-3 CS cannot be reloaded to 0: stay there)
        m.pc = pc

    def call(self, function: int, *args: int, max_insns: int = DEFAULT_MAX_INSNS) -> int:
        """Call `function(*args)` at this guest's ring; returns eax/rax."""
        m = self.machine
        self.enter(function, self._push_call_frame(args))
        self.unexpected.clear()
        exit_ = m.run(function, count=max_insns)
        if exit_.kind == exits.TRAP and exit_.vector == V.BP and exit_.pc == self.return_address + 1:
            return m.reg(RESULT_REGISTER[self.arch])
        raise KernelError(f"bare guest at ring {self.ring} did not return from {function:#x}: "
                          f"{_describe(exit_)}")

    def _push_call_frame(self, args: tuple[int, ...]) -> int:
        """The stack as a `call` leaves it: the return address, then the stack arguments
        (i386). Both ABIs want SP + one word 16-byte aligned at entry (i386 psABI 2.2.2,
        x86-64 psABI 3.2.2)."""
        fmt = "<I" if self.word == 4 else "<Q"
        if self.arch == "i386":
            stack_args = list(args)
        else:
            if len(args) > len(ARGUMENT_REGISTERS):
                raise KernelError("more than six integer arguments are not supported")
            for name, value in zip(ARGUMENT_REGISTERS, args):
                self.machine.set_reg(name, value)
            stack_args = []
        base = (self.stack_top - 64 - self.word * len(stack_args)) & ~0xF
        sp = base - self.word
        words = [self.return_address, *stack_args]
        data = b"".join(struct.pack(fmt, w & self.machine.arch.mask) for w in words)
        self.machine.mem.write(sp, data)
        # The caller's frame pointer: a frame above the call, as a caller with a frame has.
        self.machine.set_reg("ebp" if self.arch == "i386" else "rbp", self.stack_top - 2 * self.word)
        return sp


def _describe(exit_) -> str:
    if exit_.kind == exits.TRAP:
        name = V.NAMES.get(exit_.vector, f"vector {exit_.vector}")
        return f"{name} at {exit_.pc:#x}"
    if exit_.kind == exits.FAULT:
        return f"{exit_.access} fault at {exit_.address:#x} (pc {exit_.pc:#x})"
    return f"{exit_.kind} at {exit_.pc:#x}"
