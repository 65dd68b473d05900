"""emu.tlb: Unicorn's TLB holds each page's own permissions (the page walker).

What is checked is behaviour, never time: stores to a data page run inline after the first
(the TLB entry lost TLB_NOTDIRTY: Unicorn's store helper, and so a memory hook, no longer
sees them), stores into code still go through the helper that drops stale translations, and
a page the walker refuses faults on every access with the exact address.
"""
import ctypes

import pytest
from unicorn import UC_HOOK_MEM_WRITE

from emu import exits
from emu.memory import PROT_READ

from .guest import CODE, DATA, RW, RWX, asm, ax, machine_with

PROT_NONE = 0
STORES = "mov dword ptr [{d}], 1; mov dword ptr [{d} + 4], 2; nop"


def _writes_seen_by_a_late_hook(m, target: int) -> list[int]:
    """Run the two stores at CODE once, then add a memory-write hook and run them again
    without any TLB flush in between: the hook sees only stores that took Unicorn's helper."""
    assert m.run(CODE, count=2).kind == exits.BUDGET
    seen = []
    m.uc.hook_add(UC_HOOK_MEM_WRITE, lambda uc, access, address, *rest: seen.append(address),
                  None, target, target + 0xFFF)
    assert m.run(CODE, count=2).kind == exits.BUDGET
    return seen


def test_stores_to_a_data_page_run_inline_after_the_first(arch):
    m = machine_with(arch, STORES.format(d=DATA))
    assert _writes_seen_by_a_late_hook(m, DATA) == []
    assert m.mem.read(DATA, 8) == b"\x01\0\0\0\x02\0\0\0"


def test_stores_into_an_executable_page_keep_the_helper(arch):
    # The helper drops the translations a store overwrites (self-modifying code).
    target = CODE + 0x800
    m = machine_with(arch, STORES.format(d=target))
    assert _writes_seen_by_a_late_hook(m, target) == [target, target + 4]


def test_code_that_rewrites_its_next_instruction_runs_the_new_one(arch):
    # The int3 after the store was translated with it; the store turns it into a nop, so
    # the trap comes from the second int3.
    store = "mov byte ptr [{:#x}], 0x90"
    patched = CODE + len(asm(store.format(CODE), arch))
    m = machine_with(arch, store.format(patched) + "; int3; int3")
    assert m.run(CODE) == exits.Exit(exits.TRAP, patched + 2, vector=3)


def test_a_page_without_read_permission_faults_on_every_read(arch):
    # Unicorn's own check runs only in its load helper: a TLB entry made readable by the
    # first (faulting) read would let the second read through inline.
    a = ax(arch)
    m = machine_with(arch, f"mov {a}, [{DATA + 0x10:#x}]; int3")
    m.mem.write(DATA + 0x10, b"\x2a\0\0\0")
    assert m.run(CODE).kind == exits.TRAP                 # mapped readable: reads 42
    m.mem.protect(DATA, 0x1000, PROT_NONE)
    for _ in range(2):
        m.set_reg(a, 0)
        exit_ = m.run(CODE)
        assert exit_ == exits.Exit(exits.FAULT, CODE, address=DATA + 0x10, access=exits.READ,
                                   unmapped=False)
        assert m.reg(a) == 0


@pytest.mark.parametrize("source, address, access", [
    ("mov dword ptr [0x50003], 7", 0x50003, exits.WRITE),
    ("mov eax, dword ptr [0x50ffe]", 0x50ffe, exits.READ),
])
def test_an_unmapped_access_faults_with_its_exact_address(arch, source, address, access):
    m = machine_with(arch, f"nop; {source}")
    assert m.run(CODE) == exits.Exit(exits.FAULT, CODE + 1, address=address, access=access,
                                     unmapped=True)


def test_a_store_into_a_read_only_page_faults(arch):
    m = machine_with(arch, f"mov dword ptr [{DATA + 8:#x}], 7")
    m.mem.protect(DATA, 0x1000, PROT_READ)
    assert m.run(CODE) == exits.Exit(exits.FAULT, CODE, address=DATA + 8, access=exits.WRITE,
                                     unmapped=False)


def test_a_fetch_from_a_data_page_faults(arch):
    m = machine_with(arch, f"push {DATA:#x}; ret")
    m.mem.write(DATA, b"\x90")
    exit_ = m.run(CODE)
    assert (exit_.kind, exit_.pc, exit_.address, exit_.access, exit_.unmapped) == \
        (exits.FAULT, DATA, DATA, exits.FETCH, False)


def test_a_fault_leaves_the_next_run_clean(arch):
    m = machine_with(arch, "mov dword ptr [0x50000], 7; int3")
    assert m.run(CODE).kind == exits.FAULT
    m.mem.map(0x50000, 0x1000, RW)                       # the kernel maps the page: retry
    assert m.run(CODE).kind == exits.TRAP
    assert ctypes.c_uint32.from_buffer_copy(m.mem.read(0x50000, 4)).value == 7


def test_code_and_data_pages_keep_working_after_a_protection_change(arch):
    m = machine_with(arch, STORES.format(d=DATA) + "; int3")
    assert m.run(CODE).kind == exits.TRAP
    m.mem.protect(DATA, 0x1000, RWX)
    m.mem.protect(DATA, 0x1000, RW)
    m.mem.write(DATA, bytes(8))
    assert m.run(CODE).kind == exits.TRAP
    assert m.mem.read(DATA, 8) == b"\x01\0\0\0\x02\0\0\0"
