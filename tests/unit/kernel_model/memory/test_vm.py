"""kernel_model.memory.vm: the page mapper with Linux's mmap/munmap/mprotect/brk semantics
(mm/mmap.c, mm/mprotect.c) and /proc/self/maps lines (fs/proc/task_mmu.c)."""
import pytest

from emu.machine import Machine
from emu.shared_pages import SharedPages
from kernel_model import errno as E
from kernel_model.errno import GuestErrno
from kernel_model.memory.layout import LAYOUTS, PAGE
from kernel_model.memory.vm import (MAP_ANONYMOUS, MAP_FIXED, MAP_FIXED_NOREPLACE, MAP_PRIVATE, MAP_SHARED,
                             PROT_EXEC, PROT_READ, PROT_WRITE, AreaMap, Vma)
from tests.unit.kernel_model.memory.machine_view import assert_matches_machine

ANON = MAP_PRIVATE | MAP_ANONYMOUS
RW, R, RX = PROT_READ | PROT_WRITE, PROT_READ, PROT_READ | PROT_EXEC


@pytest.fixture
def vm(arch) -> AreaMap:
    return AreaMap(Machine(arch), LAYOUTS[arch])


def spans(vm):
    return [(v.start, v.end, v.perms) for v in vm.vmas]


def errno_of(call) -> int:
    with pytest.raises(GuestErrno) as info:
        call()
    return info.value.errno


# ---- mmap --------------------------------------------------------------------------------

def test_mmap_without_hint_goes_top_down_below_mmap_base(vm):
    a = vm.mmap(0, 3 * PAGE, RW, ANON)
    b = vm.mmap(0, PAGE, RW, ANON)
    assert a == vm.layout.mmap_base - 3 * PAGE
    assert b == a - PAGE
    assert_matches_machine(vm)


def test_mmap_rounds_the_length_up_to_pages(vm):
    a = vm.mmap(0, 10, RW, ANON)
    assert vm.vma_at(a).end - a == PAGE


def test_free_hint_is_honoured(vm):
    assert vm.mmap(0x1000_0000, PAGE, RW, ANON) == 0x1000_0000


def test_taken_hint_falls_back_to_a_free_range(vm):
    vm.mmap(0x1000_0000, PAGE, RW, ANON)
    other = vm.mmap(0x1000_0000, PAGE, R, ANON)
    assert other != 0x1000_0000 and vm.vma_at(0x1000_0000).perms == RW


def test_map_fixed_replaces_what_was_there(vm):
    vm.mmap(0x1000_0000, 4 * PAGE, RW, ANON)
    vm.machine.mem.write(0x1000_1000, b"old")
    assert vm.mmap(0x1000_1000, PAGE, R, ANON | MAP_FIXED) == 0x1000_1000
    assert spans(vm) == [(0x1000_0000, 0x1000_1000, RW), (0x1000_1000, 0x1000_2000, R),
                         (0x1000_2000, 0x1000_4000, RW)]
    assert vm.machine.mem.read(0x1000_1000, 3) == b"\0\0\0"     # a fresh zero page
    assert_matches_machine(vm)


def test_map_fixed_noreplace_refuses_an_occupied_range(vm):
    vm.mmap(0x1000_0000, 2 * PAGE, RW, ANON)
    assert errno_of(lambda: vm.mmap(0x1000_1000, 2 * PAGE, RW, ANON | MAP_FIXED_NOREPLACE)) == E.EEXIST
    assert vm.mmap(0x1000_2000, PAGE, RW, ANON | MAP_FIXED_NOREPLACE) == 0x1000_2000


@pytest.mark.parametrize("addr,length,flags,errno", [
    (0x1000_0001, PAGE, ANON | MAP_FIXED, E.EINVAL),      # unaligned
    (0x1000_0000, 0, ANON, E.EINVAL),                     # empty
    (0, PAGE, ANON | MAP_FIXED, E.EPERM),                 # below mmap_min_addr
])
def test_mmap_rejections(vm, addr, length, flags, errno):
    assert errno_of(lambda: vm.mmap(addr, length, RW, flags)) == errno
    assert vm.vmas == []


def test_map_fixed_beyond_user_space_is_enomem(vm):
    top = vm.layout.user_top
    assert errno_of(lambda: vm.mmap(top - PAGE, 2 * PAGE, RW, ANON | MAP_FIXED)) == E.ENOMEM


def test_memory_limit_gives_enomem(arch):
    vm = AreaMap(Machine(arch), LAYOUTS[arch], memory_limit=4 * PAGE)
    vm.mmap(0, 3 * PAGE, RW, ANON)
    assert errno_of(lambda: vm.mmap(0, 2 * PAGE, RW, ANON)) == E.ENOMEM


def test_private_file_data_is_copied(vm):
    addr = vm.mmap(0, 2 * PAGE, R, MAP_PRIVATE, data=b"file bytes", name=b"/etc/x", offset=0x3000)
    assert vm.machine.mem.read(addr, 10) == b"file bytes"
    assert vm.vma_at(addr) == Vma(addr, addr + 2 * PAGE, R, b"/etc/x", 0x3000, False)


def test_shared_file_mapping_maps_its_backing_pages(vm):
    pages = SharedPages(4 * PAGE)
    pages.write(PAGE, b"file bytes")
    addr = vm.mmap(0, 2 * PAGE, R, MAP_SHARED, name=b"/etc/x", offset=0x3000,
                   backing=lambda size: [(pages, PAGE, size)])
    assert vm.machine.mem.read(addr, 10) == b"file bytes"
    assert vm.vma_at(addr) == Vma(addr, addr + 2 * PAGE, R, b"/etc/x", 0x3000, True)
    pages.write(PAGE + 5, b"BYTES")
    assert vm.machine.mem.read(addr, 10) == b"file BYTES"      # the same pages, not a copy


# ---- munmap --------------------------------------------------------------------------------

def test_munmap_in_the_middle_splits_and_keeps_file_offsets(vm):
    vm.mmap(0x1000_0000, 4 * PAGE, R, ANON | MAP_FIXED, name=b"/f", offset=0x10000)
    vm.munmap(0x1000_1000, PAGE)
    assert spans(vm) == [(0x1000_0000, 0x1000_1000, R), (0x1000_2000, 0x1000_4000, R)]
    assert vm.vmas[1].offset == 0x10000 + 0x2000
    assert not vm.machine.mem.is_mapped(0x1000_1000)
    assert_matches_machine(vm)


def test_munmap_of_a_hole_is_fine_and_spans_several_areas(vm):
    vm.mmap(0x1000_0000, PAGE, RW, ANON | MAP_FIXED)
    vm.mmap(0x1000_3000, PAGE, R, ANON | MAP_FIXED)
    vm.munmap(0x0FFF_F000, 6 * PAGE)
    assert vm.vmas == [] and vm.machine.mem.regions() == []
    vm.munmap(0x2000_0000, PAGE)


def test_munmap_rejects_unaligned_and_empty(vm):
    assert errno_of(lambda: vm.munmap(0x1000_0001, PAGE)) == E.EINVAL
    assert errno_of(lambda: vm.munmap(0x1000_0000, 0)) == E.EINVAL


# ---- mprotect ------------------------------------------------------------------------------

def test_mprotect_in_the_middle_splits_in_three(vm):
    vm.mmap(0x1000_0000, 3 * PAGE, RW, ANON | MAP_FIXED)
    vm.mprotect(0x1000_1000, PAGE, R)
    assert spans(vm) == [(0x1000_0000, 0x1000_1000, RW), (0x1000_1000, 0x1000_2000, R),
                         (0x1000_2000, 0x1000_3000, RW)]
    assert vm.machine.mem.perms_at(0x1000_1000) == R
    assert_matches_machine(vm)


def test_mprotect_across_adjacent_areas(vm):
    vm.mmap(0x1000_0000, PAGE, RW, ANON | MAP_FIXED)
    vm.mmap(0x1000_1000, PAGE, RX, ANON | MAP_FIXED)
    vm.mprotect(0x1000_0000, 2 * PAGE, R)
    assert [v.perms for v in vm.vmas] == [R, R]
    assert_matches_machine(vm)


def test_mprotect_over_a_hole_is_enomem_and_changes_nothing(vm):
    vm.mmap(0x1000_0000, PAGE, RW, ANON | MAP_FIXED)
    vm.mmap(0x1000_2000, PAGE, RW, ANON | MAP_FIXED)
    before = spans(vm)
    assert errno_of(lambda: vm.mprotect(0x1000_0000, 3 * PAGE, R)) == E.ENOMEM
    assert errno_of(lambda: vm.mprotect(0x1000_2000, 2 * PAGE, R)) == E.ENOMEM   # runs off the end
    assert errno_of(lambda: vm.mprotect(0x2000_0000, PAGE, R)) == E.ENOMEM       # nothing there
    assert spans(vm) == before
    assert_matches_machine(vm)


def test_mprotect_unaligned_is_einval(vm):
    assert errno_of(lambda: vm.mprotect(0x1000_0800, PAGE, R)) == E.EINVAL


# ---- brk -----------------------------------------------------------------------------------

HEAP = 0x0805_0000


def test_brk_grows_shrinks_and_names_the_heap(vm):
    vm.set_brk_start(HEAP + 0x123)
    start = HEAP + PAGE                                   # page_up of the end of the image
    assert vm.brk(0) == start                             # query
    assert vm.brk(start + 0x2800) == start + 0x2800
    heap = vm.vma_at(start)
    assert (heap.start, heap.end, heap.perms, heap.name) == (start, start + 3 * PAGE, RW, b"[heap]")
    vm.machine.mem.write(start + 0x27FF, b"x")            # the whole new break is usable
    assert vm.brk(start + 0x4000) == start + 0x4000       # growing again merges into one [heap]
    assert [v.name for v in vm.vmas] == [b"[heap]"] and vm.vmas[0].end == start + 0x4000
    assert vm.brk(start + PAGE) == start + PAGE           # shrinking unmaps the tail
    assert spans(vm) == [(start, start + PAGE, RW)]
    assert_matches_machine(vm)


def test_brk_below_its_start_is_refused_with_the_old_break(vm):
    vm.set_brk_start(HEAP)
    vm.brk(HEAP + PAGE)
    assert vm.brk(HEAP - PAGE) == HEAP + PAGE
    assert spans(vm) == [(HEAP, HEAP + PAGE, RW)]


def test_brk_refuses_to_grow_into_a_mapping(vm):
    vm.set_brk_start(HEAP)
    vm.mmap(HEAP + 4 * PAGE, PAGE, R, ANON | MAP_FIXED)
    assert vm.brk(HEAP + 8 * PAGE) == HEAP                # would cover the mapping
    assert vm.brk(HEAP + 4 * PAGE) == HEAP                # would leave no guard gap
    assert vm.brk(HEAP + 3 * PAGE) == HEAP + 3 * PAGE
    assert_matches_machine(vm)


def test_brk_over_the_memory_limit_keeps_the_old_break(arch):
    vm = AreaMap(Machine(arch), LAYOUTS[arch], memory_limit=2 * PAGE)
    vm.set_brk_start(HEAP)
    assert vm.brk(HEAP + 8 * PAGE) == HEAP


# ---- /proc/self/maps -----------------------------------------------------------------------

def test_maps_text_lines_have_the_linux_layout(vm):
    vm.map_area(0x0804_8000, PAGE, RX, name=b"/bin/prog")
    vm.map_area(0x0804_9000, PAGE, RW, name=b"/bin/prog", offset=0x1000)
    vm.set_brk_start(0x0804_A000)
    vm.brk(0x0804_B000)
    vm.mmap(0x1000_0000, PAGE, RW, ANON)
    lines = vm.maps_text().split(b"\n")
    assert lines[-1] == b""
    assert lines[0] == b"08048000-08049000 r-xp 00000000 00:00 0" + b" " * 34 + b"/bin/prog"
    assert lines[1].startswith(b"08049000-0804a000 rw-p 00001000 00:00 0 ")
    assert lines[2].endswith(b"[heap]") and lines[2].index(b"[heap]") == 73
    # an anonymous line ends with the inode and one space, as Linux prints it
    assert lines[3] == b"10000000-10001000 rw-p 00000000 00:00 0 "


def test_maps_text_prints_addresses_with_at_least_eight_digits():
    """Linux uses %08lx: wide addresses print their natural width, not a fixed 12 (x86-64
    only: i386 addresses never exceed eight digits)."""
    vm = AreaMap(Machine("x86_64"), LAYOUTS["x86_64"])
    vm.mmap(0x1_0000_0000, PAGE, R, ANON | MAP_FIXED)
    vm.mmap(0x7FFF_F7FF_0000, PAGE, R, ANON | MAP_FIXED)
    lines = vm.maps_text().split(b"\n")
    assert lines[0].startswith(b"100000000-100001000 r--p ")
    assert lines[1].startswith(b"7ffff7ff0000-7ffff7ff1000 r--p ")


def test_brk_growth_keeps_an_mprotected_heap_part_separate(vm):
    vm.set_brk_start(HEAP)
    vm.brk(HEAP + 2 * PAGE)
    vm.mprotect(HEAP + PAGE, PAGE, R)
    vm.brk(HEAP + 4 * PAGE)
    assert spans(vm) == [(HEAP, HEAP + PAGE, RW), (HEAP + PAGE, HEAP + 2 * PAGE, R),
                         (HEAP + 2 * PAGE, HEAP + 4 * PAGE, RW)]
    assert all(v.name == b"[heap]" for v in vm.vmas)
    assert_matches_machine(vm)



def test_allows_walks_every_area_the_range_touches(vm):
    """Adjacent areas with different permissions: a range is allowed only when every area it
    touches has all the asked bits, and a hole or the end of the mapping refuses it."""
    base = vm.mmap(0, 3 * PAGE, RW, ANON)
    vm.mprotect(base + PAGE, PAGE, R)
    assert vm.allows(base, PAGE, PROT_WRITE)
    assert vm.allows(base, 3 * PAGE, PROT_READ)
    assert not vm.allows(base + PAGE - 1, 2, PROT_WRITE)        # straddles into the read-only page
    assert vm.allows(base + 2 * PAGE, PAGE, RW)
    assert not vm.allows(base + 2 * PAGE, PAGE + 1, PROT_READ)  # one byte past the mapping
    assert not vm.allows(base, PAGE, PROT_EXEC)
    vm.munmap(base + PAGE, PAGE)
    assert not vm.allows(base, 3 * PAGE, PROT_READ)              # the hole


# ---- PROT_NONE areas without pages -------------------------------------------------------------

def test_never_touched_prot_none_areas_cost_unicorn_no_region(vm):
    """LTP munmap04 maps 65 530 PROT_NONE areas, and each Unicorn region makes the next
    uc_mem_map_ptr slower (bench/area_map.py --machine): the area map holds them, Unicorn
    does not, until mprotect makes one accessible."""
    before = len(list(vm.machine.uc.mem_regions()))
    for i in range(200):
        vm.mmap(0x1000_0000 + 2 * i * PAGE, PAGE, 0, ANON | MAP_FIXED)
    assert len(vm.vmas) == 200
    assert len(list(vm.machine.uc.mem_regions())) == before
    vm.mprotect(0x1000_0000 + 2 * PAGE, PAGE, RW)
    assert len(list(vm.machine.uc.mem_regions())) == before + 1
    assert vm.machine.mem.read(0x1000_0000 + 2 * PAGE, 8) == bytes(8)
    assert_matches_machine(vm)


def test_a_fault_in_a_page_less_prot_none_area_is_not_a_stack_to_grow(vm):
    """grow_down is asked about faults Unicorn calls unmapped; one inside an area (a PROT_NONE
    one without pages) must not extend the grows-down area above over it."""
    vm.mmap(0x1000_0000, PAGE, 0, ANON | MAP_FIXED)
    vm.mmap(0x1000_1000, PAGE, RW, ANON | MAP_FIXED | 0x100)       # MAP_GROWSDOWN
    assert not vm.grow_down(0x1000_0010, 8 << 20)
    assert spans(vm) == [(0x1000_0000, 0x1000_1000, 0), (0x1000_1000, 0x1000_2000, RW)]
