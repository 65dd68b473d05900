"""Execute-out-of-line pages (US 9,336,001: the trampoline lives in a page mapped into the process).

Pages are mapped through the kernel's debug interface, near the code they serve (x86-64: within
±2 GiB so that `jmp rel32` reaches both ways), and handed out in 16-byte aligned slots.
"""
import copy

from ..errors import InstrumenterError

PAGE = 0x1000
XOL_SIZE = 16 * PAGE
PROT_RWX = 7            # written by the tool, executed by the guest


class XolArea:
    def __init__(self, debug, process, near: int):
        self.debug = debug
        self.process = process
        self.near = near
        self.base = debug.map_pages(process, XOL_SIZE, PROT_RWX, near=near, name=b"[uprobes]")
        self.next = self.base
        self.limit = self.base + XOL_SIZE
        # Slots given back (instrumenter/tracing/dynamic.py, once no thread can run them): a
        # tuple, replaced on change, so that a fork child's copy of the area keeps its own.
        self.free: tuple[tuple[int, int], ...] = ()

    def release(self, address: int, size: int) -> None:
        self.free += ((address, (size + 15) & ~15),)

    def forked(self, child) -> "XolArea":
        """The same area in a fork child, whose memory copy holds the pages and what was
        written in them; later slots are allocated (and new chunks mapped) in the child."""
        clone = copy.copy(self)
        clone.process = child
        return clone

    def allocate(self, size: int) -> int:
        size = (size + 15) & ~15
        for index, (address, free_size) in enumerate(self.free):
            if free_size == size:
                self.free = self.free[:index] + self.free[index + 1:]
                return address
        if size > XOL_SIZE:
            raise InstrumenterError(f"an out-of-line slot of {size} bytes does not fit a chunk")
        if self.next + size > self.limit:             # full: map another chunk near the code
            self.next = self.debug.map_pages(self.process, XOL_SIZE, PROT_RWX, near=self.near,
                                             name=b"[uprobes]")
            self.limit = self.next + XOL_SIZE
            if not self.reaches(self.near):
                raise InstrumenterError("no room for more out-of-line code within ±2 GiB")
        address = self.next
        self.next += size
        return address

    def write(self, address: int, code: bytes) -> None:
        self.debug.write_memory(self.process, address, code)

    def reaches(self, address: int) -> bool:
        """Can a rel32 jump get from every slot of the area's current chunk to `address` and
        back? Asked of where the chunk IS, not of where it was asked for: the kernel maps it
        elsewhere when nothing near is free. (i386: always — a 32-bit displacement wraps
        around the whole address space.)"""
        if self.debug.arch(self.process).bits == 32:
            return True
        return abs(address - (self.limit - XOL_SIZE)) < (1 << 31) - XOL_SIZE
