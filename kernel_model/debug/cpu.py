"""A tool's view of the CPU and memory a traced address space runs on (kernel_model/debug/).

What ptrace gives a real tool for a thread stopped in a trap (PTRACE_GETREGS/SETREGS, PEEK/POKE
and /proc/PID/mem), what uprobes' handlers get as pt_regs, and the page protections a tool must
respect when it emulates an instruction (US 7,350,196). The registers are those of the thread that
is live on the space's CPU: the one that trapped, inside a trap or event handler. A switched-out
thread's registers are read and written with DebugInterface.read_register/write_register.

The view stands between a tool and the Machine and page mapper, so the kernel may change how it
keeps them; it is cached per address space (the hot path of a probe hit asks for it).
"""


class SpaceCpu:
    __slots__ = ("_machine", "_mem", "_vm", "arch", "read_clock", "hit_clock")

    def __init__(self, space):
        self._machine = space.machine
        # read_clock() is instructions_retired in one call (the Machine's own reader, kept
        # here): a probe hit's ts (instrumenter/tracing/entry_hit.py), issue 31
        self.read_clock = space.machine.read_clock
        # hit_clock.value: read_clock()'s value inside an int3 hit the Machine's C interrupt
        # hook took (it computes it before the hit: emu/clock_parts.py), else -1; one load
        # where read_clock is a Python call (a fifth of such a hit, issue 31)
        self.hit_clock = space.machine.hit_clock
        self._mem = space.machine.mem
        self._vm = space.vm
        self.arch = space.machine.arch           # name, bits, word, pc/sp names, mask

    # ---- registers of the live thread -----------------------------------------------------
    def register(self, name: str) -> int:
        return self._machine.reg(name)

    def set_register(self, name: str, value: int) -> None:
        self._machine.set_reg(name, value)

    @property
    def sp(self) -> int:
        return self._machine.sp

    @property
    def pc(self) -> int:
        return self._machine.pc

    def registers(self):
        """Every general register, flags and segment bases (emu.registers.RegisterFile)."""
        return self._machine.registers()

    def register_batch(self, names: tuple[str, ...]):
        """A reader of several registers at once (`.read()`): the probe-hit hot path."""
        return self._machine.raw_registers(names)

    def register_fetcher(self, names: tuple[str, ...]):
        """A callable returning the general registers `names` of the live thread as a tuple,
        made once and called on every hit: one itemgetter over the CPU state where it is
        viewed directly (emu/cpu_state.py register_fetcher; what the syscall dispatcher
        reads its arguments with), several times cheaper than a batch's `.read()`
        (bench/probe_rate.py)."""
        return self._machine.register_fetcher(names)

    @property
    def instructions_retired(self) -> int:
        """Instructions run so far on the clock the space counts on (0 if not counted)."""
        return self._machine.instructions_retired

    # ---- memory ----------------------------------------------------------------------------
    def read(self, address: int, size: int) -> bytes:
        return self._mem.read(address, size)

    def read_cstr(self, address: int, limit: int = 4096) -> bytes:
        return self._mem.read_cstr(address, limit)

    def write(self, address: int, data: bytes) -> None:
        """Through the Machine's one write path: translations of patched code are dropped."""
        self._mem.write(address, data)

    def perms_at(self, address: int) -> int | None:
        """PROT_* bits of the page holding `address` as the CPU enforces them, None if unmapped."""
        return self._mem.perms_at(address)

    def is_mapped(self, address: int, size: int) -> bool:
        return self._mem.is_mapped(address, size)

    def area_at(self, address: int):
        """The area (kernel_model.memory.vm.Vma: start, end, perms, name) holding `address`, or None."""
        return self._vm.vma_at(address)
