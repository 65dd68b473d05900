"""Guest code for the machine and kernel tests: assemble with keystone, map, run.

Intel syntax throughout. Addresses are low and fixed so that failures print readable numbers.
"""
from keystone import KS_ARCH_X86, KS_MODE_32, KS_MODE_64, Ks

from emu.machine import Machine
from emu.memory import PROT_EXEC, PROT_READ, PROT_WRITE

ARCHES = ("i386", "x86_64")
CODE = 0x10000           # one page of code, RWX so tests can also store into it
DATA = 0x20000           # one page of data, RW
STACK = 0x30000          # one page of stack, RW; sp starts in its middle
STACK_SP = STACK + 0x800
RWX = PROT_READ | PROT_WRITE | PROT_EXEC
RW = PROT_READ | PROT_WRITE

_KS = {}


def asm(source: str, arch: str, address: int = CODE) -> bytes:
    """Assemble `source` (Intel syntax, `;`-separated) as it would sit at `address`."""
    mode = KS_MODE_32 if arch == "i386" else KS_MODE_64
    ks = _KS.get(mode) or _KS.setdefault(mode, Ks(KS_ARCH_X86, mode))
    encoding, _ = ks.asm(source, address)
    return bytes(encoding)


def machine_with(arch: str, source: str = "", *, code_perms: int = RWX) -> Machine:
    """A fresh Machine with code at CODE (from `source`), a data page and a stack page."""
    m = Machine(arch)
    m.mem.map(CODE, 0x1000, code_perms)
    m.mem.map(DATA, 0x1000, RW)
    m.mem.map(STACK, 0x1000, RW)
    m.sp = STACK_SP
    if source:
        m.mem.write(CODE, asm(source, arch))
    return m


def ax(arch: str) -> str:
    """Name of the accumulator register for the arch."""
    return "eax" if arch == "i386" else "rax"
