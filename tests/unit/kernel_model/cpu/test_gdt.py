"""kernel_model.cpu.gdt: descriptor encoding (Intel SDM Vol. 3A, 3.4.5, Figure 3-8) and the
Linux selector layout (arch/x86/include/asm/segment.h) written into guest memory."""
import struct

import pytest

from kernel_model.cpu import gdt
from kernel_model.memory.space import Space


def decode_descriptor(desc: int) -> dict:
    """Field by field as Figure 3-8 draws them (independent of gdt.py's own helpers)."""
    lo, hi = desc & 0xFFFF_FFFF, desc >> 32
    return {
        "limit": (lo & 0xFFFF) | (hi & 0x000F_0000),
        "base": (lo >> 16) | ((hi & 0xFF) << 16) | (hi & 0xFF00_0000),
        "type": (hi >> 8) & 0xF, "s": (hi >> 12) & 1, "dpl": (hi >> 13) & 3, "p": (hi >> 15) & 1,
        "avl": (hi >> 20) & 1, "l": (hi >> 21) & 1, "db": (hi >> 22) & 1, "g": (hi >> 23) & 1,
    }


@pytest.mark.parametrize("base,limit,access,flags", [
    (0, 0xFFFFF, gdt.CODE_RING0, gdt.FLAGS_32),
    (0x1234_5678, 0xABCDE, gdt.DATA_RING3, gdt.FLAGS_32),
    (0xFFFF_FFFF, 0xFFFFF, gdt.CODE_RING3, gdt.FLAGS_64),
    (0x0804_A000, 0x00FFF, 0xF3, 0x4),
])
def test_descriptor_fields_round_trip(base, limit, access, flags):
    desc = gdt.descriptor(base, limit, access, flags)
    fields = decode_descriptor(desc)
    assert fields["base"] == base == gdt.descriptor_base(desc)
    assert fields["limit"] == limit
    assert (fields["p"] << 7 | fields["dpl"] << 5 | fields["s"] << 4 | fields["type"]) == access
    assert (fields["g"] << 3 | fields["db"] << 2 | fields["l"] << 1 | fields["avl"]) == flags


def test_descriptor_matches_a_known_linux_value():
    # Linux GDT_ENTRY_INIT(0xc09b, 0, 0xfffff) for __KERNEL_CS on i386 = 0x00cf9b000000ffff
    assert gdt.descriptor(0, 0xFFFFF, gdt.CODE_RING0, gdt.FLAGS_32) == 0x00CF_9B00_0000_FFFF
    # x86-64 __KERNEL_CS: GDT_ENTRY_INIT(0xa09b, 0, 0xfffff) = 0x00af9b000000ffff
    assert gdt.descriptor(0, 0xFFFFF, gdt.CODE_RING0, gdt.FLAGS_64) == 0x00AF_9B00_0000_FFFF


# selector -> (is code, long mode code) for each Linux selector
EXPECTED = {
    "i386": {0x10: ("code", 0), 0x18: ("data", 0), 0x23: ("code", 0), 0x2B: ("data", 0)},
    "x86_64": {0x10: ("code", 1), 0x18: ("data", 0), 0x23: ("code", 0), 0x2B: ("data", 0),
               0x33: ("code", 1)},
}


def test_linux_selectors_are_the_documented_ones():
    # an i386 program on an x86-64 kernel: __KERNEL_CS, __KERNEL_DS, __USER32_CS, __USER_DS
    assert gdt.SELECTORS["i386"] == gdt.Selectors(kernel_cs=0x10, kernel_ds=0x18, user_cs=0x23, user_ds=0x2B)
    assert gdt.SELECTORS["x86_64"] == gdt.Selectors(kernel_cs=0x10, kernel_ds=0x18, user_cs=0x33, user_ds=0x2B)


def test_gdt_in_guest_memory_describes_every_linux_selector(arch):
    space = Space(arch)
    m = space.machine
    _, base, limit, _ = m.reg("gdtr")
    assert base == space.layout.gdt and limit == 8 * gdt.GDT_ENTRIES - 1
    for selector, (kind, long_mode) in EXPECTED[arch].items():
        raw = m.mem.read(base + (selector & ~7), 8)
        fields = decode_descriptor(struct.unpack("<Q", raw)[0])
        assert fields["p"] == 1 and fields["s"] == 1
        assert fields["dpl"] == selector & 3, f"selector {selector:#x}: DPL must equal its RPL"
        assert bool(fields["type"] & 8) == (kind == "code"), f"selector {selector:#x}"
        assert fields["type"] & 1, "Accessed preset: the guest GDT page is read-only"
        assert fields["l"] == long_mode
        assert fields["base"] == 0 and fields["limit"] == 0xFFFFF and fields["g"] == 1
    assert m.mem.read(base, 8) == bytes(8), "entry 0 is the null descriptor"


def test_gdt_is_not_writable_by_the_guest(arch):
    space = Space(arch)
    assert space.machine.mem.perms_at(space.layout.gdt) == 1   # PROT_READ only


def test_set_entry_writes_through_to_guest_memory(arch):
    space = Space(arch)
    desc = gdt.descriptor(0x1000, 0xFFFFF, gdt.DATA_RING3, gdt.FLAGS_32)
    space.gdt.set_entry(gdt.I386_TLS_FIRST, desc)
    raw = space.machine.mem.read(space.layout.gdt + 8 * gdt.I386_TLS_FIRST, 8)
    assert struct.unpack("<Q", raw)[0] == desc
