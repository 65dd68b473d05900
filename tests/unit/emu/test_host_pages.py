"""emu.host_pages and the host-backed side of emu.memory: pages are given back, a copy takes
only touched pages, sync writes only what differs (and keeps other translations), and a closed
Machine cannot be used by mistake."""
import ctypes

import pytest
from hypothesis import given, strategies as st

from emu import host_pages
from emu.errors import MachineError
from emu.machine import Machine
from emu.memory import PAGE

from .guest import CODE, RW, RWX, asm, ax, machine_with


def test_a_new_range_is_zero_and_untouched_until_written():
    size = 64 * PAGE
    address = host_pages.allocate(size)
    try:
        assert list(host_pages.touched_runs(address, size)) == []
        ctypes.memmove(address + 5 * PAGE + 7, b"x", 1)
        ctypes.memmove(address + 6 * PAGE, b"y", 1)
        ctypes.memmove(address + 9 * PAGE, b"z", 1)
        assert list(host_pages.touched_runs(address, size)) == [(5 * PAGE, 2 * PAGE), (9 * PAGE, PAGE)]
        assert ctypes.string_at(address, 5 * PAGE) == bytes(5 * PAGE)
    finally:
        host_pages.free(address, size)


def test_copy_takes_only_the_touched_pages_and_equal_compares_in_place():
    size = 256 * PAGE
    source, destination = host_pages.allocate(size), host_pages.allocate(size)
    try:
        ctypes.memmove(source + 3 * PAGE, b"three", 5)
        ctypes.memmove(source + 200 * PAGE + 100, b"two hundred", 11)
        host_pages.copy(destination, source, size)
        runs = list(host_pages.touched_runs(destination, size))
        assert sum(length for _, length in runs) == 2 * PAGE       # the other pages never touched
        assert host_pages.equal(destination, source, size)
        assert ctypes.string_at(destination + 200 * PAGE + 100, 11) == b"two hundred"
        assert host_pages.equal(destination + 3 * PAGE, b"three", 5)
        assert not host_pages.equal(destination + 3 * PAGE, b"thref", 5)
    finally:
        host_pages.free(source, size)
        host_pages.free(destination, size)


def test_memory_reads_and_writes_go_to_the_host_pages_and_unmap_frees_a_part(arch):
    m = Machine(arch)
    m.mem.map(0x40000, 4 * PAGE, RW)
    m.mem.write(0x41FFE, b"abcd")                   # across a page boundary, one piece
    assert m.mem.read(0x41FFE, 4) == b"abcd"
    m.mem.unmap(0x41000, PAGE)
    assert m.mem.pieces() == [(0x40000, 0x41000), (0x42000, 0x44000)]
    assert m.mem.read(0x42000, 2) == b"cd"
    with pytest.raises(MachineError):
        m.mem.read(0x41000, 1)


def test_copy_from_copies_a_range_between_machines(arch):
    parent, child = Machine(arch), Machine(arch)
    parent.mem.map(0x40000, 64 * PAGE, RW)
    child.mem.map(0x40000, 64 * PAGE, RW)
    parent.mem.write(0x40000 + 10 * PAGE, b"ten")
    child.mem.copy_from(parent.mem, 0x40000, 64 * PAGE)
    assert child.mem.read(0x40000 + 10 * PAGE, 3) == b"ten"
    assert child.mem.resident_bytes() == PAGE
    parent.mem.write(0x40000 + 10 * PAGE, b"TEN")                     # a copy, not a share
    assert child.mem.read(0x40000 + 10 * PAGE, 3) == b"ten"


def test_sync_writes_only_the_pages_that_differ_and_they_run_as_written(arch):
    m = machine_with(arch, "mov eax, 1; nop")
    m.run(CODE, count=2)
    assert m.reg(ax(arch)) == 1
    image = asm("mov eax, 2; nop", arch).ljust(PAGE, b"\0")
    assert m.mem.sync(CODE, image) == 1
    assert m.mem.sync(CODE, image) == 0                                 # nothing differs now
    m.run(CODE, count=2)
    assert m.reg(ax(arch)) == 2                                          # no stale translation


def test_a_closed_machine_gives_everything_back_and_refuses_use(arch):
    m = machine_with(arch, "nop")
    m.close()
    assert m.closed and m.mem is None and m.uc is None
    m.close()                                                            # idempotent
    with pytest.raises(AttributeError):
        m.run(CODE)


def test_reset_restores_a_new_cpu_and_keeps_memory(arch):
    m = machine_with(arch, "mov eax, 7; nop", code_perms=RWX)
    m.run(CODE, count=2)
    m.trap_handler = lambda vector, pc: True
    m.reset()
    assert m.reg(ax(arch)) == 0 and m.trap_handler is None
    assert m.mem.read(CODE, 1) == asm("mov eax, 7", arch)[:1]


def _unicorn_regions(m):
    out = []
    for begin, last, perms in sorted(m.uc.mem_regions()):
        if out and out[-1][1] == begin and out[-1][2] == perms:
            out[-1][1] = last + 1
        else:
            out.append([begin, last + 1, perms])
    return [tuple(r) for r in out]


_OPS = st.lists(st.tuples(st.sampled_from(["map", "unmap", "protect"]), st.integers(0, 15),
                          st.integers(1, 6), st.sampled_from([1, 3, 5, 7])), max_size=25)


@given(ops=_OPS)
def test_the_permission_map_mirrors_unicorns_regions(ops):
    """regions()/perms_at() read a mirror kept by map/unmap/protect (no uc_mem_regions call):
    after any sequence it equals what Unicorn has."""
    m = Machine("x86_64")
    base = 0x100000
    for op, page, count, perms in ops:
        lo, size = base + page * PAGE, count * PAGE
        if op == "map":
            if any(m.mem.perms_at(lo + i * PAGE) is not None for i in range(count)):
                continue
            m.mem.map(lo, size, perms)
        elif op == "unmap":
            m.mem.unmap(lo, size)
        elif m.mem.is_mapped(lo, size):
            m.mem.protect(lo, size, perms)
        assert m.mem.regions() == _unicorn_regions(m)
    for page in range(24):
        address = base + page * PAGE
        expected = next((p for s, e, p in _unicorn_regions(m) if s <= address < e), None)
        assert m.mem.perms_at(address) == expected
