"""PROT_NONE areas without pages (kernel_model/memory/vm.py map_area) lose nothing (hypothesis,
both arches): under any sequence of mmap, mprotect, munmap, MADV_DONTNEED, mremap and guest
stores in a small window, then a fork, every page of every area reads what the model says was
stored there (zero if nothing), a page that holds a stored byte always has pages, and the
Machine maps exactly the areas less their page-less PROT_NONE parts. Asserted reached: a byte
stored, hidden by PROT_NONE and read back after mprotect; a never-touched PROT_NONE range made
accessible; a page-less area moved by mremap."""
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from kernel_model.errno import GuestErrno
from kernel_model.memory.advice import MADV_DONTNEED, madvise
from kernel_model.memory.layout import PAGE
from kernel_model.memory.remap import MREMAP_FIXED, MREMAP_MAYMOVE, mremap
from kernel_model.memory.vm import MAP_ANONYMOUS, MAP_FIXED, MAP_PRIVATE, PROT_WRITE
from kernel_model.process.fork import copy_space
from tests.unit.kernel_model.memory.machine_view import assert_matches_machine
from tests.unit.kernel_model.userland import user_program

WINDOW = 0x2000_0000
WINDOW_PAGES = 10
REACHED = {"kept": False, "fresh": False, "moved": False}

page = st.integers(0, WINDOW_PAGES - 1)
# most calls aim at an area (the n-th one, a page or two into it): uniform ranges mostly miss
area_page = st.one_of(st.tuples(st.just("area"), st.integers(0, 15), st.integers(0, 1)), page)
pages = st.integers(1, 4)
prot = st.sampled_from([0, 0, 1, 3])          # PROT_NONE twice as often as the others
operations = st.lists(st.one_of(
    st.tuples(st.just("mmap"), page, pages, prot),
    st.tuples(st.just("mprotect"), area_page, pages, prot),
    st.tuples(st.just("mprotect"), area_page, pages, prot),
    st.tuples(st.just("munmap"), area_page, pages),
    st.tuples(st.just("store"), area_page, st.integers(1, 255)),
    st.tuples(st.just("store"), area_page, st.integers(1, 255)),
    st.tuples(st.just("dontneed"), area_page, pages),
    st.tuples(st.just("mremap"), area_page, st.integers(1, 2), page),
), max_size=24)


def at(index: int) -> int:
    return WINDOW + index * PAGE


def area_pages(vm):
    return [p for v in vm.vmas if v.start >= WINDOW for p in range(v.start, v.end, PAGE)]


def place(vm, where) -> int:
    """The page index `where` names: a window page, or a page of the n-th area in it."""
    if isinstance(where, int):
        return where
    areas = [v for v in vm.vmas if v.start >= WINDOW]
    if not areas:
        return 0
    return (areas[where[1] % len(areas)].start - WINDOW) // PAGE + where[2]


def apply(vm, model: dict, op) -> None:
    kind, index = op[0], place(vm, op[1])
    try:
        if kind == "mmap":
            vm.mmap(at(index), op[2] * PAGE, op[3], MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED)
            _clear(model, at(index), op[2])
        elif kind == "mprotect":
            _note_reopening(vm, model, at(index), op[2], op[3])
            vm.mprotect(at(index), op[2] * PAGE, op[3])
        elif kind == "munmap":
            vm.munmap(at(index), op[2] * PAGE)
            _clear(model, at(index), op[2])
        elif kind == "store":
            vma = vm.vma_at(at(index))
            if vma is not None and vma.perms & PROT_WRITE:
                vm.machine.mem.write(at(index), bytes([op[2]]))
                model[at(index)] = op[2]
        elif kind == "dontneed":
            madvise(vm, at(index), op[2] * PAGE, MADV_DONTNEED)
            _clear(model, at(index), op[2])
        else:
            _move(vm, model, at(index), op[2], at(op[3]))
    except GuestErrno:
        pass                 # refused: nothing changed (the checks come before any change)


def _clear(model: dict, start: int, count: int) -> None:
    for p in range(start, start + count * PAGE, PAGE):
        model.pop(p, None)


def _note_reopening(vm, model: dict, start: int, count: int, new_prot: int) -> None:
    if not new_prot:
        return
    for p in range(start, start + count * PAGE, PAGE):
        vma = vm.vma_at(p)
        if vma is not None and not vma.perms:
            REACHED["kept"] |= model.get(p, 0) != 0
            REACHED["fresh"] |= not vm.backed_parts(p, p + PAGE)


def _move(vm, model: dict, old: int, count: int, new: int) -> None:
    untouched = not vm.backed_parts(old, old + count * PAGE)
    mremap(vm, old, count * PAGE, count * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, new)
    moved = {p - old + new: model.pop(p) for p in range(old, old + count * PAGE, PAGE) if p in model}
    _clear(model, new, count)
    model.update(moved)
    REACHED["moved"] |= untouched and not vm.vma_at(new).perms


def check(vm, model: dict) -> None:
    assert_matches_machine(vm, (WINDOW, WINDOW + 2 * WINDOW_PAGES * PAGE))
    for p in area_pages(vm):
        if vm.backed_parts(p, p + PAGE):
            assert vm.machine.mem.read(p, 1)[0] == model.get(p, 0), hex(p)
        else:
            assert model.get(p, 0) == 0, f"{p:#x}: a stored byte without pages"
            assert not vm.vma_at(p).perms, f"{p:#x}: an accessible page without pages"


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
@settings(max_examples=60, deadline=None)
@given(ops=operations)
# a byte stored, hidden by PROT_NONE (the fork then copies the hidden page), shown again
@example(ops=[("mmap", 0, 2, 3), ("store", 1, 7), ("mprotect", 0, 2, 0), ("mprotect", 1, 1, 1)])
@example(ops=[("mmap", 0, 2, 3), ("store", 1, 7), ("mprotect", 0, 2, 0)])
def test_page_less_prot_none_areas_lose_no_byte(arch, ops):
    space = user_program(arch, "nop", enter=False).space
    model: dict[int, int] = {}
    for op in ops:
        apply(space.vm, model, op)
        check(space.vm, model)
    child = copy_space(space, 4 << 30)
    check(child.vm, model)
    for vma in [v for v in child.vm.vmas if v.start >= WINDOW and not v.perms]:
        child.vm.mprotect(vma.start, vma.end - vma.start, 1)
    check(child.vm, model)


def test_the_interesting_cases_were_reached():
    """Run after the property (file order)."""
    for arch in ("i386", "x86_64"):
        test_page_less_prot_none_areas_lose_no_byte(arch)
    assert all(REACHED.values()), REACHED
