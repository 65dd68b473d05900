"""The hardware trap frame, in the order the CPU pushes it.

Intel SDM Vol. 3A, 6.12.1 (Figure 6-4): on a privilege change the CPU switches to the kernel
stack and pushes SS, ESP, EFLAGS, CS, EIP, then the error code when the vector has one. Without
a privilege change (a trap in ring-0 code) SS and ESP are not pushed: the frame then sits on the
very stack the interrupted code uses (US 7,350,196, FIG. 4A-6B). In 64-bit mode SS:RSP are always
pushed (SDM 6.14.2) and every slot is 8 bytes.

`TrapFrame` lists the slots from the lowest address (where the stack pointer points after the
trap) upwards; `pack()` gives the bytes that sit on the stack.
"""
import functools
import struct
from dataclasses import dataclass


@functools.cache
def _layout(word: int, slots: int) -> struct.Struct:
    return struct.Struct(f"<{slots}{'I' if word == 4 else 'Q'}")


@dataclass(slots=True)     # one is built per trap: slots make that (and every access) cheaper
class TrapFrame:
    vector: int
    ip: int
    cs: int
    flags: int
    sp: int | None          # None when not pushed (same-privilege trap in 32-bit mode)
    ss: int | None
    error_code: int | None  # None when the vector pushes no error code
    word: int               # 4 or 8
    address: int = 0        # where the frame's lowest slot sits in guest memory
    fault_address: int | None = None   # CR2 for #PF

    def slots(self) -> list[tuple[str, int]]:
        out = []
        if self.error_code is not None:
            out.append(("error_code", self.error_code))
        out += [("ip", self.ip), ("cs", self.cs), ("flags", self.flags)]
        if self.sp is not None:
            out += [("sp", self.sp), ("ss", self.ss)]
        return out

    def values(self) -> tuple[int, ...]:
        """The slot values from the lowest address up, truncated to the word size."""
        mask = (1 << (8 * self.word)) - 1
        head = (self.ip & mask, self.cs & mask, self.flags & mask)
        if self.error_code is not None:
            head = (self.error_code & mask,) + head
        if self.sp is not None:
            head += (self.sp & mask, self.ss & mask)
        return head

    def pack(self) -> bytes:
        values = self.values()
        return _layout(self.word, len(values)).pack(*values)

    @property
    def size(self) -> int:
        return self.word * (3 + (self.error_code is not None) + 2 * (self.sp is not None))

    @property
    def from_user(self) -> bool:
        return (self.cs & 3) == 3
