"""vm.max_map_count (mm/mmap.c): mmap refuses a new area once an mm holds more areas than the
limit, and munmap or mprotect refuse a split that would take it past the limit, with ENOMEM
and nothing changed (LTP munmap04 maps until mmap fails, then expects munmap's ENOMEM)."""
import pytest

from emu.machine import Machine
from kernel_model import errno as E
from kernel_model.errno import GuestErrno
from kernel_model.memory.layout import LAYOUTS, PAGE
from kernel_model.memory.vm import (DEFAULT_MAX_MAP_COUNT, MAP_ANONYMOUS, MAP_FIXED,
                                    MAP_FIXED_NOREPLACE, MAP_PRIVATE, PROT_READ, AreaMap)

BASE = 0x1000_0000
NOREPLACE = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE


def errno_of(call) -> int:
    with pytest.raises(GuestErrno) as info:
        call()
    return info.value.errno


def full_map(arch, limit: int) -> AreaMap:
    """An AreaMap holding as many 3-page areas (a page apart) as mmap allows under `limit`,
    as munmap04's setup makes them."""
    vm = AreaMap(Machine(arch), LAYOUTS[arch])
    vm.max_map_count = limit
    for i in range(limit + 2):              # bounded: without a limit mmap never refuses
        try:
            vm.mmap(BASE + i * 4 * PAGE, 3 * PAGE, 0, NOREPLACE)
        except GuestErrno as e:
            assert e.errno == E.ENOMEM
            return vm
    pytest.fail(f"{limit + 2} areas mapped under a limit of {limit}")


def test_the_default_is_linuxs():
    assert DEFAULT_MAX_MAP_COUNT == 65530


def test_mmap_stops_one_past_the_limit(arch):
    """do_mmap refuses when map_count > sysctl_max_map_count: the last area allowed makes
    the count limit + 1."""
    vm = full_map(arch, 5)
    assert len(vm.vmas) == 6
    before = list(vm.vmas)
    assert errno_of(lambda: vm.mmap(0, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS)) == E.ENOMEM
    assert vm.vmas == before


def test_munmap_inside_an_area_at_the_limit_is_enomem(arch):
    vm = full_map(arch, 5)
    before = list(vm.vmas)
    middle = vm.vmas[2].start + PAGE
    assert errno_of(lambda: vm.munmap(middle, PAGE)) == E.ENOMEM
    assert vm.vmas == before
    vm.munmap(vm.vmas[2].start, PAGE)            # an edge: no split, allowed
    vm.munmap(vm.vmas[0].start, 3 * PAGE)        # a whole area
    assert len(vm.vmas) == 5


def test_munmap_inside_an_area_below_the_limit_splits(arch):
    vm = full_map(arch, 5)
    vm.munmap(vm.vmas[0].start, 3 * PAGE)
    vm.munmap(vm.vmas[0].start, 3 * PAGE)        # 4 areas: one split brings 5
    vm.munmap(vm.vmas[1].start + PAGE, PAGE)
    assert len(vm.vmas) == 5


def test_mprotect_needs_room_for_every_split(arch):
    """split_vma refuses at map_count >= the limit: a change inside an area needs two."""
    vm = full_map(arch, 5)
    for _ in range(2):
        vm.munmap(vm.vmas[0].start, 3 * PAGE)    # 4 areas
    before = list(vm.vmas)
    middle = vm.vmas[1].start + PAGE
    assert errno_of(lambda: vm.mprotect(middle, PAGE, PROT_READ)) == E.ENOMEM
    assert vm.vmas == before
    vm.mprotect(vm.vmas[1].start, PAGE, PROT_READ)      # one split: 5 areas
    assert [v.perms for v in vm.vmas[1:3]] == [PROT_READ, 0]
    assert len(vm.vmas) == 5


def test_map_fixed_inside_an_area_at_the_limit_is_enomem(arch):
    vm = full_map(arch, 5)
    for _ in range(2):
        vm.munmap(vm.vmas[0].start, 3 * PAGE)    # 4 areas, then 5 by the mapping below
    vm.mmap(0, PAGE, 0, MAP_PRIVATE | MAP_ANONYMOUS)
    before = list(vm.vmas)
    middle = vm.vmas[1].start + PAGE
    assert errno_of(lambda: vm.mmap(middle, PAGE, PROT_READ,
                                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED)) == E.ENOMEM
    assert vm.vmas == before
