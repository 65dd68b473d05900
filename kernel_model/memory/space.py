"""One guest address space (Space): its Machine, its areas (vm.AreaMap, the page mapper), GDT,
IDT and trap dispatcher.

Threads of a process and a vfork child share one Space (and so one Machine); fork makes a new
Space with a copy of the memory.
"""
import itertools
import struct

from emu.fpu import reset_fpu
from emu.machine import Machine

from ..cpu.gdt import SELECTORS, Gdt
from ..cpu.ldt import Ldt
from ..cpu.idt import Idt
from ..images import ImageMap
from .layout import LAYOUTS, PAGE
from ..cpu.traps import TrapDispatcher
from ..cpu.tsc import disable_user_time_stamps
from .vm import PROT_EXEC, PROT_READ, PROT_WRITE, AreaMap

IRET32 = b"\xcf"            # iretd
IRET64 = b"\x48\xcf"        # iretq
USER_EFLAGS = 0x202
# Linux arch/x86/entry: the call number, then the six argument registers of each ABI.
SYSCALL_ARGUMENT_REGISTERS = {
    "i386": ("eax", "ebx", "ecx", "edx", "esi", "edi", "ebp"),
    "x86_64": ("rax", "rdi", "rsi", "rdx", "r10", "r8", "r9"),
}         # IF set, reserved bit 1 set: what a new Linux process starts with


# Serial numbers of address spaces: a space's identity for every table that is keyed on one.
# id() would not do: once a space is released its id is reused, and a stale entry under the
# reused id would make a tool believe the new space is already patched (issue 12).
_SERIALS = itertools.count(1)


class Space:
    def __init__(self, arch: str, *, memory_limit: int = 4 << 30, recycled=None):
        """A new address space: a new Machine, or `recycled`, a RecycledMachine of the pool
        (kernel_model/memory/space_pool.py) whose kernel region and kept code areas are in place."""
        self.serial = next(_SERIALS)
        self.released = False
        self.machine = recycled.machine if recycled is not None else Machine(arch)
        self.arch = arch
        self.layout = LAYOUTS[arch]
        self.selectors = SELECTORS[arch]
        self.vm = AreaMap(self.machine, self.layout, memory_limit=memory_limit)
        self.images = ImageMap()            # the ELF objects mapped here (kernel_model/images.py)
        self.aio = None                     # its AIO contexts (aio/table.py), at the first io_setup
        self.userfaults = []                # the userfaultfds with ranges here (userfaultfd/)
        self.vdso = None                    # where exec mapped the vDSO (kernel_model/vdso/mapping.py)
        self.membarrier_state = 0           # mm->membarrier_state (syscalls/impls/membarrier.py)
        lay = self.layout
        self._iret = IRET32 if self.machine.arch.bits == 32 else IRET64
        if recycled is None:
            self._map_kernel_region()
        else:
            for vma in recycled.kept:
                self.vm.adopt_area(vma)
        disable_user_time_stamps(self.machine)     # RDTSC traps to the kernel (cpu/tsc.py)
        self.gdt = Gdt(self.machine, lay.gdt, arch)
        self.ldt = Ldt(self.machine, lay.ldt)        # empty until modify_ldt writes an entry
        self.idt = Idt(self.machine, lay.idt, lay.stubs, self.selectors.kernel_cs)
        self.current_kstack_top = self.kstack_top(0)
        self.traps = TrapDispatcher(self.machine, self.idt, lambda: self.current_kstack_top)
        self.machine.trap_handler = self.traps.dispatch
        self.machine.breakpoint_redirect = self.traps.redirect_breakpoint
        # rcx/r11/rflags for the x86-64 `syscall` entry: raw access, it is the hottest path
        self._abi_registers: dict = {}
        self.syscall_registers = tuple(self.machine.raw_register(r) for r in ("rcx", "r11", "rflags")) \
            if self.machine.arch.bits == 64 else ()

    def _map_kernel_region(self) -> None:
        lay = self.layout
        self.machine.mem.map(lay.kernel_base, lay.kstacks - lay.kernel_base, PROT_READ)
        self.machine.mem.protect(lay.stubs, 4 * PAGE, PROT_READ | PROT_EXEC)   # ring-0 entry stubs
        # Kernel stacks: writable. Unicorn has no U/S page bit, so ring 3 could reach them in
        # any case.
        self.machine.mem.map(lay.kstacks, lay.kstack_pages * PAGE, PROT_READ | PROT_WRITE)
        self.machine.mem.write(lay.stubs, self._iret * (PAGE * 4 // len(self._iret)))

    def give_up_machine(self):
        """Released, its Machine handed to the pool instead of closed (space_pool.py)."""
        machine = self.machine
        self._exit_aio()
        self.released = True
        self._abi_registers = {}
        self.syscall_registers = ()
        self.machine = None
        return machine

    def release(self) -> None:
        """Give the memory and the emulator back (a zombie's space, an image replaced by exec).
        The Space object stays as a record (its serial, its last VMAs); its Machine is closed."""
        if not self.released:
            self._exit_aio()
            self.released = True
            self._abi_registers = {}
            self.syscall_registers = ()
            self.machine.close()

    def missing_watched(self, page: int) -> bool:
        """Whether a userfaultfd registered `page` for missing-page faults (mode bit 1,
        UFFDIO_REGISTER_MODE_MISSING)."""
        return any(reg.mode & 1 for uffd in self.userfaults
                   for reg in [uffd.registration_at(page)] if reg is not None)

    def _exit_aio(self) -> None:
        """fs/aio.c exit_aio, as the mm goes: its contexts are killed (fs.aio-nr drops)."""
        if self.aio is not None:
            self.aio.release()
            self.aio = None

    def syscall_abi_registers(self, abi: str):
        """(batched reader of the call number and six arguments, the result register) for
        `abi` — i386 is also reachable from 64-bit code through int 0x80."""
        cached = self._abi_registers.get(abi)
        if cached is None:
            names = SYSCALL_ARGUMENT_REGISTERS[abi]
            if abi == "i386" and self.machine.arch.bits == 64:
                names = tuple("r" + n[1:] for n in names)       # eax -> rax: whole registers
            cached = self._abi_registers[abi] = (self.machine.raw_registers(names),
                                                 self.machine.raw_register(names[0]))
        return cached

    def kstack_top(self, slot: int) -> int:
        return self.layout.kstacks + (slot % self.layout.kstack_pages + 1) * PAGE

    def enter_user_mode(self, pc: int, sp: int, *, kstack_top: int) -> None:
        """Drop to ring 3 at pc/sp the way a kernel does: IRET from a ring-0 frame.

        Unicorn starts at CPL 0 with no segments loaded; segment registers at CPL 3 can only be
        reached through a privilege-changing IRET (docs/unicorn.md item 7).
        """
        m, sel, word = self.machine, self.selectors, self.machine.arch.word
        m.set_reg("cs", sel.kernel_cs)
        m.set_reg("ss", sel.kernel_ds)
        if m.arch.bits == 32:
            m.set_reg("ds", sel.user_ds)
            m.set_reg("es", sel.user_ds)
            m.set_reg("fs", 0)
            m.set_reg("gs", 0)
        frame = [pc, sel.user_cs, USER_EFLAGS, sp, sel.user_ds]
        fmt = "<I" if word == 4 else "<Q"
        raw = b"".join(struct.pack(fmt, v) for v in frame)
        base = kstack_top - len(raw)
        m.mem.write(base, raw)
        m.sp = base
        m.run(self.layout.stubs, until=pc)      # the iret, and nothing of the program
        reset_fpu(m)                            # execve's fpu_flush_thread (emu/fpu.py)
