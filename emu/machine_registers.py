"""The Machine's registers (mixed into emu.machine.Machine): by name, as a RegisterFile, and the
fast accessors of the hot paths, which use the direct views of the CPU state where they exist
(cpu_state.py) and uclib calls otherwise. Layers above emu/ use these methods, never the views
themselves: what a view may do (a PC stored only inside an interrupt hook) is emu/'s business.
"""
from unicorn import UcError

from .cpu_state import ViewedRegisters, register_fetcher, viewable
from .errors import MachineError
from .internals.binding import handle
from .registers import REGISTER_IDS, RawRegister, RawRegisters, RegisterFile, gpr_names

SYSCALL_INSN_LEN = 2     # 0f 05
_SELECTORS = ("cs", "ss", "ds", "es", "fs", "gs")


class MachineRegisters:
    """Needs from the Machine: uc, arch, cpu_state, raw_pc, _direct, _readers,
    _in_syscall_hook."""

    def reg(self, name: str) -> int:
        if name == "pc":
            return self.pc
        if self._direct and viewable(name):
            return self.cpu_state.register(name).value
        return self.uc.reg_read(REGISTER_IDS[name])

    def set_reg(self, name: str, value) -> None:
        if name in ("pc", self.arch.pc):
            self.pc = value
            return
        try:
            self.uc.reg_write(REGISTER_IDS[name], value)
        except (KeyError, UcError) as e:
            raise MachineError(f"cannot write register {name}: {e}") from None

    @property
    def pc(self) -> int:
        pc = self.cpu_state.eip.value & self._pc_mask
        # Inside the syscall hook Unicorn still shows the syscall instruction itself and adds 2
        # after the hook returns (docs/unicorn.md item 4); show the architectural value.
        return pc + SYSCALL_INSN_LEN if self._in_syscall_hook else pc

    @pc.setter
    def pc(self, value: int) -> None:
        self.raw_pc.write(value - SYSCALL_INSN_LEN if self._in_syscall_hook else value)

    @property
    def sp(self) -> int:
        return self.reg(self.arch.sp)

    @sp.setter
    def sp(self, value: int) -> None:
        self.uc.reg_write(REGISTER_IDS[self.arch.sp], value)

    def registers(self) -> RegisterFile:
        """Two batched reads (the general registers; the flags and selectors) instead of one
        binding call per register: a signal's frame captures them all (LTP signal06 delivers
        150 000 signals)."""
        names = gpr_names(self.arch)
        rest = self.raw_registers((self.arch.flags,) + _SELECTORS).read()
        return RegisterFile(arch=self.arch.name,
                            gpr=dict(zip(names, self.raw_registers(names).read())),
                            pc=self.pc, flags=rest[0],
                            fs_base=self._base("fs_base"), gs_base=self._base("gs_base"),
                            selectors=dict(zip(_SELECTORS, rest[1:])))

    def set_regs(self, values: dict[str, int]) -> None:
        """Several registers (not the PC) in one uclib batch: a signal handler's arguments,
        the registers sigreturn restores."""
        names = tuple(values)
        writers = self.__dict__.setdefault("_writers", {})
        writer = writers.get(names)
        if writer is None:
            writer = writers[names] = RawRegisters(handle(self.uc), names)
        writer.write(values.values())

    def set_registers(self, regs: RegisterFile) -> None:
        """Write back the GPRs, PC and flags of a RegisterFile (not selectors or bases)."""
        for name, value in regs.gpr.items():
            self.uc.reg_write(REGISTER_IDS[name], value)
        self.uc.reg_write(REGISTER_IDS[self.arch.flags], regs.flags)
        self.pc = regs.pc

    def _base(self, name: str) -> int:
        # FS_BASE/GS_BASE are 64-bit-mode registers; in 32-bit mode the base comes from the GDT.
        return self.uc.reg_read(REGISTER_IDS[name]) if self.arch.bits == 64 else 0

    def raw_register(self, name: str) -> RawRegister:
        return RawRegister(handle(self.uc), name)

    def raw_registers(self, names: tuple[str, ...]) -> RawRegisters | ViewedRegisters:
        """A batched reader of several registers: views where all are general registers and
        the CPU state is viewed directly (cpu_state.py), else one uclib call. One reader per
        tuple of names, so a hot path may ask for it on every event."""
        reader = self._readers.get(names)
        if reader is None:
            if self._direct and all(viewable(name) for name in names):
                reader = ViewedRegisters(self.cpu_state, names)
            else:
                reader = RawRegisters(handle(self.uc), names)
            self._readers[names] = reader
        return reader

    def register_cell(self, name: str):
        """An object whose `value` reads and writes register `name` of the live CPU: a general
        register (what uc_reg_read/uc_reg_write do with it, a 32-bit name seeing the low half)
        or "cs" (read only). A plain load or store where the CPU state is viewed directly, a
        uclib call otherwise; for the paths of every syscall and probe hit."""
        if name == "cs":
            return self.cpu_state.cs
        return self.cpu_state.register(name)

    def register_fetcher(self, names: tuple[str, ...]):
        """A callable returning the values of general registers `names` as a tuple: one
        itemgetter over the register slots where the CPU state is viewed directly
        (cpu_state.register_fetcher); the syscall dispatcher reads arguments with it."""
        return register_fetcher(self.cpu_state, names)

