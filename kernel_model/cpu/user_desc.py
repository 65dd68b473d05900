"""struct user_desc, the i386 ABI's description of a TLS segment (set_thread_area,
get_thread_area, clone's CLONE_SETTLS), and the GDT descriptor it becomes.

include/uapi/asm/ldt.h: entry_number, base_addr, limit, then a word of bits: seg_32bit,
contents (2 bits), read_exec_only, limit_in_pages, seg_not_present, useable, lm.
arch/x86/include/asm/desc.h fill_ldt() builds the descriptor; arch/x86/kernel/tls.c checks it
(tls_desc_okay) and reads it back (fill_user_desc).
"""
import struct
from dataclasses import dataclass

from .gdt import descriptor

LAYOUT = struct.Struct("<iIII")


@dataclass(frozen=True)
class UserDesc:
    entry: int
    base: int
    limit: int
    seg_32bit: int = 0
    contents: int = 0
    read_exec_only: int = 0
    limit_in_pages: int = 0
    seg_not_present: int = 0
    useable: int = 0
    lm: int = 0

    @classmethod
    def unpack(cls, raw: bytes) -> "UserDesc":
        entry, base, limit, bits = LAYOUT.unpack(raw)
        return cls(entry, base, limit, bits & 1, bits >> 1 & 3, bits >> 3 & 1, bits >> 4 & 1,
                   bits >> 5 & 1, bits >> 6 & 1, bits >> 7 & 1)

    def pack(self) -> bytes:
        bits = (self.seg_32bit | self.contents << 1 | self.read_exec_only << 3
                | self.limit_in_pages << 4 | self.seg_not_present << 5 | self.useable << 6
                | self.lm << 7)
        return LAYOUT.pack(self.entry, self.base, self.limit, bits)

    def empty(self) -> bool:
        """LDT_empty or LDT_zero (asm/desc.h): a request to clear the entry."""
        zero = (self.base == self.limit == self.seg_32bit == self.contents == self.read_exec_only
                == self.limit_in_pages == self.seg_not_present == self.useable == 0)
        cleared = (self.base == self.limit == self.contents == self.seg_32bit
                   == self.limit_in_pages == self.useable == 0
                   and self.read_exec_only == self.seg_not_present == 1)
        return zero or cleared

    def okay(self) -> bool:
        """tls_desc_okay: an empty entry, else a 32-bit data segment (contents 0 or 1: no code,
        no 16-bit segment) that is not a long-mode one."""
        if self.empty():
            return True
        return bool(self.seg_32bit) and self.contents <= 1 and not self.lm

    def descriptor(self) -> int:
        """fill_ldt: the type's Accessed bit set (so the GDT can stay read-only), S=1, DPL 3."""
        if self.empty():
            return 0
        kind = (self.read_exec_only ^ 1) << 1 | self.contents << 2 | 1
        access = kind | 0x10 | 0x60 | (self.seg_not_present ^ 1) << 7
        flags = self.useable | self.seg_32bit << 2 | self.limit_in_pages << 3
        return descriptor(self.base, self.limit, access, flags)

    @classmethod
    def of_descriptor(cls, entry: int, desc: int) -> "UserDesc":
        """fill_user_desc: what get_thread_area reports for a GDT entry (zeros but the number
        for an empty one)."""
        base = (desc >> 16 & 0xFFFFFF) | (desc >> 56 & 0xFF) << 24
        limit = (desc & 0xFFFF) | (desc >> 48 & 0xF) << 16
        access, flags = desc >> 40 & 0xFF, desc >> 52 & 0xF
        kind = access & 0xF
        return cls(entry, base, limit, seg_32bit=flags >> 2 & 1, contents=kind >> 2,
                   read_exec_only=int(not kind & 2), limit_in_pages=flags >> 3 & 1,
                   seg_not_present=int(not access & 0x80), useable=flags & 1,
                   lm=flags >> 1 & 1)
