"""The two guest architectures and what differs between them at the machine level.

Everything above emu/ names an architecture by its string ("i386" or "x86_64") and asks this
module for sizes and register names; only emu/ knows Unicorn's constants.
"""
from dataclasses import dataclass

from unicorn import UC_MODE_32, UC_MODE_64

from .errors import MachineError


@dataclass(frozen=True)
class Arch:
    name: str          # "i386" or "x86_64"
    bits: int          # 32 or 64
    word: int          # bytes per stack slot / pointer
    uc_mode: int
    pc: str            # name of the instruction pointer register
    sp: str            # name of the stack pointer register
    flags: str         # name of the flags register
    mask: int          # all-ones for the word size

    @property
    def word_format(self) -> str:
        """struct format of one machine word (little-endian)."""
        return "<I" if self.word == 4 else "<Q"


I386 = Arch("i386", 32, 4, UC_MODE_32, "eip", "esp", "eflags", 0xFFFF_FFFF)
X86_64 = Arch("x86_64", 64, 8, UC_MODE_64, "rip", "rsp", "rflags", 0xFFFF_FFFF_FFFF_FFFF)

ARCHES = {a.name: a for a in (I386, X86_64)}


def arch_named(name: str) -> Arch:
    try:
        return ARCHES[name]
    except KeyError:
        raise MachineError(f"unknown architecture {name!r} (expected i386 or x86_64)") from None
