"""Page-mapper invariants under random mmap/munmap/mprotect/brk sequences (both arches):
the VMA list stays sorted, non-overlapping and page aligned, and it describes exactly the
memory the Machine has mapped, with the same permissions."""
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from emu.machine import Machine
from kernel_model.errno import GuestErrno
from kernel_model.memory.layout import LAYOUTS, PAGE
from kernel_model.memory.vm import MAP_ANONYMOUS, MAP_FIXED, MAP_FIXED_NOREPLACE, MAP_PRIVATE, AreaMap
from tests.unit.kernel_model.memory.machine_view import assert_matches_machine

# A small window keeps operations colliding with each other; the heap sits inside it.
WINDOW = 0x1000_0000
WINDOW_PAGES = 24
HEAP_START = WINDOW + 8 * PAGE

page_index = st.integers(0, WINDOW_PAGES - 1)
pages = st.integers(1, 8)
prot = st.integers(0, 7)
# munmap/mprotect aim at an existing area (the n-th one, a few pages into it) most of the time:
# uniformly random ranges almost always hit a hole, and mprotect then only says ENOMEM.
target = st.one_of(st.tuples(st.just("area"), st.integers(0, 63), st.integers(0, 3)),
                   st.tuples(st.just("window"), page_index, st.just(0)))

mmap_op = st.tuples(st.just("mmap"), page_index, pages, prot,
                    st.sampled_from([0, MAP_FIXED, MAP_FIXED_NOREPLACE, "nohint"]))
munmap_op = st.tuples(st.just("munmap"), target, pages)
mprotect_op = st.tuples(st.just("mprotect"), target, pages, prot)
brk_op = st.tuples(st.just("brk"), st.integers(-2 * PAGE, 12 * PAGE))
# brk twice over: heap areas that mprotect or munmap split and brk then regrows are where
# the list and the Machine most easily disagree.
operations = st.lists(st.one_of(mmap_op, munmap_op, mprotect_op, brk_op, brk_op), max_size=25)


def address_of(vm: AreaMap, where) -> int:
    kind, index, offset = where
    if kind == "area" and vm.vmas:
        return vm.vmas[index % len(vm.vmas)].start + offset * PAGE
    return WINDOW + index * PAGE


def apply(vm: AreaMap, op) -> None:
    kind = op[0]
    try:
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
    except GuestErrno:
        pass             # refusals are fine; the invariants must hold either way


def check_invariants(vm: AreaMap) -> None:
    for v in vm.vmas:
        assert v.start % PAGE == 0 and v.end % PAGE == 0 and v.start < v.end, v
    for a, b in zip(vm.vmas, vm.vmas[1:]):
        assert a.end <= b.start, (a, b)
    assert_matches_machine(vm)


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
@given(ops=operations)
# found by this property: brk regrowing a heap whose top part mprotect made read-only merged
# the parts into one read-write [heap] area while the Machine kept the read-only page
@example(ops=[("brk", 2 * PAGE), ("mprotect", ("area", 0, 1), 1, 1), ("brk", 3 * PAGE)])
def test_vma_list_matches_the_machine(arch, ops):
    vm = AreaMap(Machine(arch), LAYOUTS[arch])
    vm.set_brk_start(HEAP_START)
    for op in ops:
        apply(vm, op)
        check_invariants(vm)


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
@given(ops=operations, probes=st.lists(st.integers(-1, WINDOW_PAGES * PAGE), max_size=12))
def test_vma_at_answers_as_a_scan_of_the_list(arch, ops, probes):
    """vma_at keeps its last answer; after any change it still names the area a linear scan
    finds (or None in a hole)."""
    vm = AreaMap(Machine(arch), LAYOUTS[arch])
    vm.set_brk_start(HEAP_START)
    for op in ops:
        for addr in [WINDOW + p for p in probes]:
            expected = next((v for v in vm.vmas if v.start <= addr < v.end), None)
            assert vm.vma_at(addr) is expected
        apply(vm, op)
