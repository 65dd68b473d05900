"""The area map's bisect-based queries against a brute-force model (both arches): after any
sequence of mmap/munmap/mprotect/brk, under a small vm.max_map_count so the limit is met,
the area found at an address, the areas over a range, the mapped bytes and the hole mmap picks
are what a scan of every area gives; the count never passes the limit by more than mmap's one,
and a refusal for the limit changes nothing."""
from collections import Counter

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from emu.machine import Machine
from kernel_model import errno as E
from kernel_model.errno import GuestErrno
from kernel_model.memory.layout import LAYOUTS, PAGE
from kernel_model.memory.vm import MAP_ANONYMOUS, MAP_FIXED, MAP_PRIVATE, AreaMap

from .test_vm_properties import HEAP_START, WINDOW, WINDOW_PAGES, address_of, operations

LIMIT = 3


def scan_at(vm: AreaMap, addr: int):
    return next((v for v in vm.vmas if v.start <= addr < v.end), None)


def scan_over(vm: AreaMap, start: int, end: int) -> list:
    return [v for v in vm.vmas if v.start < end and v.end > start]


def scan_free(vm: AreaMap, size: int, below: int):
    """Top-down first fit by looking at every area, highest first."""
    top = below
    for v in sorted(vm.vmas, key=lambda v: v.start, reverse=True):
        if v.start >= top:
            continue
        if v.end <= top - size:
            return top - size
        top = min(top, v.start)
    return top - size if top - size >= 0x10000 else None


def check_against_the_scan(vm: AreaMap) -> None:
    assert vm.vmas == sorted(vm.vmas, key=lambda v: v.start)
    assert vm.mapped_bytes() == sum(v.end - v.start for v in vm.vmas)
    for page in range(-1, WINDOW_PAGES + 9):
        addr = WINDOW + page * PAGE
        assert vm.vma_at(addr) is scan_at(vm, addr)
        assert vm.vma_at(addr + PAGE - 1) is scan_at(vm, addr + PAGE - 1)
        for length in (1, 3):
            assert vm._overlapping(addr, addr + length * PAGE) == scan_over(vm, addr, addr + length * PAGE)
        for size in (PAGE, 3 * PAGE):
            try:
                found = vm.find_free(size, below=addr)
            except GuestErrno:
                found = None
            assert found == scan_free(vm, size, addr)


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_area_map_agrees_with_a_scan_of_every_area(arch):
    seen = Counter()

    @settings(deadline=None)
    @given(ops=operations)
    @example(ops=[("mmap", page, 1, 0, MAP_FIXED) for page in range(0, 10, 2)])   # one refused
    def run(ops):
        vm = AreaMap(Machine(arch), LAYOUTS[arch])
        vm.max_map_count = LIMIT
        vm.set_brk_start(HEAP_START)
        for op in ops:
            before = list(vm.vmas)
            try:
                apply_raising(vm, op)
            except GuestErrno as e:
                if e.errno == E.ENOMEM and "max_map_count" in str(e):
                    assert vm.vmas == before
                    seen["refused for the limit"] += 1
            assert len(vm.vmas) <= LIMIT + 1
            seen["at the limit"] += len(vm.vmas) >= LIMIT
            check_against_the_scan(vm)

    run()
    assert seen["refused for the limit"] and seen["at the limit"], seen


def apply_raising(vm: AreaMap, op) -> None:
    """test_vm_properties.apply, leaving the refusal to the caller."""
    kind = op[0]
    if kind == "mmap":
        _, index, count, p, flags = op
        addr = 0 if flags == "nohint" else WINDOW + index * PAGE
        vm.mmap(addr, count * PAGE, p, MAP_PRIVATE | MAP_ANONYMOUS | (0 if flags == "nohint" else flags))
    elif kind == "munmap":
        vm.munmap(address_of(vm, op[1]), op[2] * PAGE)
    elif kind == "mprotect":
        vm.mprotect(address_of(vm, op[1]), op[2] * PAGE, op[3])
    else:
        vm.brk(HEAP_START + op[1])
