"""Register names, the RegisterFile snapshot, and raw ctypes access for hot paths.

docs/unicorn.md: the binding's reg_read/reg_write cost several times what raw `uclib` calls do,
and a raw batch of registers less than one binding call per register. Trap dispatch and syscalls
use `RawRegisters`.
"""
import ctypes
from dataclasses import dataclass, field

from unicorn import x86_const as X

from .arch import Arch
from .internals.binding import BARE_UCLIB, uclib

# Name -> Unicorn register id. Names are lower-case as in AT&T/Intel listings.
_COMMON = {
    "cs": X.UC_X86_REG_CS, "ss": X.UC_X86_REG_SS, "ds": X.UC_X86_REG_DS,
    "es": X.UC_X86_REG_ES, "fs": X.UC_X86_REG_FS, "gs": X.UC_X86_REG_GS,
    "gdtr": X.UC_X86_REG_GDTR, "idtr": X.UC_X86_REG_IDTR, "ldtr": X.UC_X86_REG_LDTR,
    "fs_base": X.UC_X86_REG_FS_BASE, "gs_base": X.UC_X86_REG_GS_BASE,
    "cr4": X.UC_X86_REG_CR4,
}
_GPR32 = ("eax", "ebx", "ecx", "edx", "esi", "edi", "ebp", "esp")
_GPR64 = ("rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp",
          "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15")

REGISTER_IDS = dict(_COMMON)
for _n in _GPR32 + ("eip", "eflags"):
    REGISTER_IDS[_n] = getattr(X, f"UC_X86_REG_{_n.upper()}")
for _n in _GPR64 + ("rip", "rflags"):
    REGISTER_IDS[_n] = getattr(X, f"UC_X86_REG_{_n.upper()}")
# The x87 and SSE state (emu/fpu.py): control/status/tag words, MXCSR, the stack and XMM registers.
FPU_CONTROL = ("fpcw", "fpsw", "fptag", "mxcsr")
X87_STACK = tuple(f"st{i}" for i in range(8))
XMM = tuple(f"xmm{i}" for i in range(16))
for _n in FPU_CONTROL + X87_STACK + XMM:
    REGISTER_IDS[_n] = getattr(X, f"UC_X86_REG_{_n.upper()}")


def gpr_names(arch: Arch) -> tuple[str, ...]:
    return _GPR32 if arch.bits == 32 else _GPR64


@dataclass
class RegisterFile:
    """The user-visible integer state of one thread: GPRs, PC, flags, TLS bases, selectors.

    `gpr` maps names like "eax"/"rax" to values; 32-bit and 64-bit files use their own names.
    """
    arch: str
    gpr: dict[str, int]
    pc: int
    flags: int
    fs_base: int = 0
    gs_base: int = 0
    selectors: dict[str, int] = field(default_factory=dict)

    def __getitem__(self, name: str) -> int:
        if name in ("eip", "rip", "pc"):
            return self.pc
        if name in ("eflags", "rflags", "flags"):
            return self.flags
        return self.gpr[name]

    def as_dict(self) -> dict[str, int]:
        out = dict(self.gpr)
        out.update(pc=self.pc, flags=self.flags, fs_base=self.fs_base, gs_base=self.gs_base)
        out.update(self.selectors)
        return out


class RawRegisters:
    """Batch register access through uclib, bypassing the binding's per-call wrapper."""

    def __init__(self, uc_handle, names: tuple[str, ...]):
        self._h = uc_handle
        self.names = names
        n = len(names)
        self._ids = (ctypes.c_int * n)(*(REGISTER_IDS[x] for x in names))
        self._vals = (ctypes.c_uint64 * n)()
        self._ptrs = (ctypes.c_void_p * n)(*(ctypes.addressof(self._vals) + 8 * i for i in range(n)))
        self._n = n

    def read(self) -> list[int]:
        uclib.uc_reg_read_batch(self._h, self._ids, self._ptrs, self._n)
        return list(self._vals)

    def write(self, values) -> None:
        """Write `values` (in the order of `names`) in one uc_reg_write_batch: Unicorn writes
        them in turn, as that many uc_reg_write calls would."""
        self._vals[:] = [v & 0xFFFFFFFFFFFFFFFF for v in values]
        uclib.uc_reg_write_batch(self._h, self._ids, self._ptrs, self._n)


class RawRegister:
    """One register read/written through uclib without the binding's prototypes (BARE_UCLIB:
    cheaper than with them, and much cheaper than through the binding). The x86-64
    syscall entry reads RFLAGS with one on every call."""
    __slots__ = ("_h", "_id", "_v", "_p")

    def __init__(self, uc_handle, name: str):
        self._h = uc_handle
        self._id = REGISTER_IDS[name]
        self._v = ctypes.c_uint64()
        self._p = ctypes.byref(self._v)

    def read(self) -> int:
        BARE_UCLIB.uc_reg_read(self._h, self._id, self._p)
        return self._v.value

    def write(self, value: int) -> None:
        self._v.value = value
        BARE_UCLIB.uc_reg_write(self._h, self._id, self._p)



class BareRegister:
    """One register read/written through the prototype-less uclib handle (the fallback of the
    int3 path where cpu_state.py cannot view the CPU state)."""
    __slots__ = ("read", "write")

    def __init__(self, uc_handle: ctypes.c_void_p, name: str):
        reg_read, reg_write = BARE_UCLIB.uc_reg_read, BARE_UCLIB.uc_reg_write
        reg_id, value = REGISTER_IDS[name], ctypes.c_uint64()
        pointer = ctypes.byref(value)

        def read() -> int:
            reg_read(uc_handle, reg_id, pointer)
            return value.value

        def write(new: int) -> None:
            value.value = new
            reg_write(uc_handle, reg_id, pointer)
        self.read, self.write = read, write
