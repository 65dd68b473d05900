"""Execute-out-of-line pages (seed 000: the trampoline lives in a page mapped into the process).

Pages are mapped through the kernel's debug interface, near the code they serve (x86-64: within
±2 GiB so that `jmp rel32` reaches both ways), and handed out in 16-byte aligned slots.
"""
from .errors import InstrumenterError

PAGE = 0x1000
XOL_SIZE = 16 * PAGE
PROT_RWX = 7            # written by the tool, executed by the guest


class XolArea:
    def __init__(self, debug, process, near: int):
        self.debug = debug
        self.process = process
        self.base = debug.map_pages(process, XOL_SIZE, PROT_RWX, near=near, name=b"[uprobes]")
        self.next = self.base

    def allocate(self, size: int) -> int:
        address = self.next
        end = address + ((size + 15) & ~15)
        if end > self.base + XOL_SIZE:
            raise InstrumenterError("the out-of-line area is full (too many probes)")
        self.next = end
        return address

    def write(self, address: int, code: bytes) -> None:
        self.debug.write_memory(self.process, address, code)

    def reaches(self, address: int) -> bool:
        """Can a rel32 jump get from the area to `address` and back? (i386: always — a 32-bit
        displacement wraps around the whole address space.)"""
        if self.process.machine.arch.bits == 32:
            return True
        return abs(address - self.base) < (1 << 31) - XOL_SIZE
