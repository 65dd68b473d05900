"""The Local Descriptor Table of one address space (Linux mm->context.ldt, arch/x86/kernel/
ldt.c) and the descriptor a `struct user_desc` stands for.

A selector with its TI bit set names an entry of the LDT, whose linear base and limit the CPU
holds in LDTR (Intel SDM Vol. 3A, 3.5.1); loading one past the limit is #GP, an entry not
present #NP. The table lives in the kernel region (Layout.ldt, read-only to the guest), its
16 pages (LDT_ENTRIES descriptors) mapped when the first entry is written, and LDTR is set to
its base with a limit of the entries written so far (nr_entries: the highest entry + 1). A
fork's child gets a copy (ldt_dup_context), exec a new space without one.
"""
import struct


LDT_ENTRIES, LDT_ENTRY_SIZE = 8192, 8
USER_DESC_SIZE = 16           # struct user_desc: entry_number, base_addr, limit, the bits


class UserDesc:
    """A struct user_desc (include/uapi/asm/ldt.h): its bitfields after base and limit are
    seg_32bit, contents (2 bits), read_exec_only, limit_in_pages, seg_not_present, useable,
    lm (x86-64 only)."""

    def __init__(self, raw: bytes):
        self.entry_number, self.base, self.limit, bits = struct.unpack("<IIII", raw)
        self.seg_32bit, self.contents = bits & 1, bits >> 1 & 3
        self.read_exec_only, self.limit_in_pages = bits >> 3 & 1, bits >> 4 & 1
        self.seg_not_present, self.useable, self.lm = bits >> 5 & 1, bits >> 6 & 1, bits >> 7 & 1

    def empty(self) -> bool:
        """asm/desc.h LDT_empty: the pattern that asks for an entry to be cleared."""
        return (self.base, self.limit, self.contents, self.read_exec_only, self.seg_32bit,
                self.limit_in_pages, self.seg_not_present, self.useable, self.lm) == \
            (0, 0, 0, 1, 0, 0, 1, 0, 0)

    def descriptor(self, keep_avl: bool) -> int:
        """asm/desc.h fill_ldt (Intel SDM Vol. 3A, 3.4.5): a ring-3 code or data segment, the
        Accessed bit preset as Linux sets it (the table is read-only)."""
        type_ = (self.read_exec_only ^ 1) << 1 | self.contents << 2 | 1
        access = (self.seg_not_present ^ 1) << 7 | 3 << 5 | 1 << 4 | type_
        flags = self.limit_in_pages << 3 | self.seg_32bit << 2 | self.lm << 1 | \
            (self.useable if keep_avl else 0)
        lo = (self.limit & 0xFFFF) | (self.base & 0xFFFF) << 16
        hi = (self.base >> 16 & 0xFF) | access << 8 | (self.limit >> 16 & 0xF) << 16 | \
            flags << 20 | (self.base >> 24 & 0xFF) << 24
        return lo | hi << 32


class Ldt:
    def __init__(self, machine, base: int):
        self.machine, self.base = machine, base
        self.entries: list[int] = []          # nr_entries descriptors; none: no LDT

    def install(self, index: int, desc: int) -> None:
        """Entry `index` is `desc`; the table grows to hold it (write_ldt's new_ldt)."""
        if not self.entries:
            size = LDT_ENTRIES * LDT_ENTRY_SIZE
            if not self.machine.mem.is_mapped(self.base, size):
                self.machine.mem.map(self.base, size, 1)        # PROT_READ
            self.machine.mem.write(self.base, bytes(size))       # a recycled Machine's old one
        if index >= len(self.entries):
            self.entries += [0] * (index + 1 - len(self.entries))
        self.entries[index] = desc
        self.machine.mem.write(self.base + LDT_ENTRY_SIZE * index, struct.pack("<Q", desc))
        self._load()

    def copy_to(self, other: "Ldt") -> None:
        """A fork's child's table: the same entries (ldt_dup_context)."""
        for index, desc in enumerate(self.entries):
            other.install(index, desc)

    def raw(self) -> bytes:
        return struct.pack(f"<{len(self.entries)}Q", *self.entries)

    def _load(self) -> None:
        """LDTR: the table's base and limit (load_mm_ldt); the selector is not the guest's."""
        self.machine.set_reg("ldtr", (0, self.base, LDT_ENTRY_SIZE * len(self.entries) - 1, 0x82))
