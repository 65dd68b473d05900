"""The Global Descriptor Table in guest memory, with Linux's selector layout.

Descriptor format: Intel SDM Vol. 3A, 3.4.5 (Figure 3-8). Layouts follow Linux
arch/x86/include/asm/segment.h (CONFIG_X86_64) so that guest code sees the selectors it expects.
An i386 program runs as on the x86-64 kernel of the hosts the sandbox is compared with (and of
most machines that run i386 programs today): the 64-bit kernel's GDT, its program in
compatibility mode, so the selectors are the same for both arches:
  kernel CS 0x10, kernel DS 0x18, user32 CS 0x23, user DS 0x2b, user CS 0x33 (x86-64 only),
  TLS entries 12..14 (GDT_ENTRY_TLS_MIN: set_thread_area's first entry is 12, %gs 0x63).
Here the i386 kernel's own code runs in 32-bit mode (Unicorn's i386 CPU has no long mode), so
its entry 2 is a 32-bit code descriptor.
"""
import struct
from dataclasses import dataclass

GDT_ENTRIES = 32

# access byte: P | DPL | S | type. The type's Accessed bit is preset: the CPU writes it into the
# descriptor the first time a selector is loaded (SDM Vol. 3A, 3.4.5.1), and the GDT page is
# read-only to the guest, as a kernel's GDT is.
CODE_RING0, DATA_RING0, CODE_RING3, DATA_RING3 = 0x9B, 0x93, 0xFB, 0xF3
FLAGS_32 = 0xC      # G=1 (4 KiB granularity), D/B=1 (32-bit)
FLAGS_64 = 0xA      # G=1, L=1 (64-bit code)

I386_TLS_FIRST, I386_TLS_COUNT = 12, 3    # GDT_ENTRY_TLS_MIN (x86-64), GDT_ENTRY_TLS_ENTRIES


def descriptor(base: int, limit: int, access: int, flags: int) -> int:
    lo = (limit & 0xFFFF) | ((base & 0xFFFF) << 16)
    hi = (((base >> 16) & 0xFF) | (access << 8) | (((limit >> 16) & 0xF) << 16)
          | ((flags & 0xF) << 20) | (((base >> 24) & 0xFF) << 24))
    return lo | (hi << 32)


def descriptor_base(desc: int) -> int:
    return ((desc >> 16) & 0xFFFFFF) | (((desc >> 56) & 0xFF) << 24)


@dataclass(frozen=True)
class Selectors:
    kernel_cs: int
    kernel_ds: int
    user_cs: int
    user_ds: int


I386_SELECTORS = Selectors(kernel_cs=0x10, kernel_ds=0x18, user_cs=0x23, user_ds=0x2B)
X86_64_SELECTORS = Selectors(kernel_cs=0x10, kernel_ds=0x18, user_cs=0x33, user_ds=0x2B)
SELECTORS = {"i386": I386_SELECTORS, "x86_64": X86_64_SELECTORS}


def linux_entries(arch: str) -> dict[int, int]:
    flat = 0xFFFFF
    if arch == "i386":
        return {2: descriptor(0, flat, CODE_RING0, FLAGS_32), 3: descriptor(0, flat, DATA_RING0, FLAGS_32),
                4: descriptor(0, flat, CODE_RING3, FLAGS_32), 5: descriptor(0, flat, DATA_RING3, FLAGS_32)}
    return {2: descriptor(0, flat, CODE_RING0, FLAGS_64), 3: descriptor(0, flat, DATA_RING0, FLAGS_32),
            4: descriptor(0, flat, CODE_RING3, FLAGS_32), 5: descriptor(0, flat, DATA_RING3, FLAGS_32),
            6: descriptor(0, flat, CODE_RING3, FLAGS_64)}


class Gdt:
    """The GDT of one address space: written into guest memory, GDTR pointed at it."""

    def __init__(self, machine, base: int, arch: str):
        self.machine, self.base, self.arch = machine, base, arch
        self.entries = [0] * GDT_ENTRIES
        for index, desc in linux_entries(arch).items():
            self.entries[index] = desc
        self._flush()
        machine.set_reg("gdtr", (0, base, 8 * GDT_ENTRIES - 1, 0))

    def set_entry(self, index: int, desc: int) -> None:
        self.entries[index] = desc
        self.machine.mem.write(self.base + 8 * index, struct.pack("<Q", desc))

    def _flush(self) -> None:
        self.machine.mem.write(self.base, struct.pack(f"<{GDT_ENTRIES}Q", *self.entries))
