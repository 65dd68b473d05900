"""AreaMap.readable answers from the readable area it found last when it can (a syscall's buffer is
nearly always in the area the previous call's was): whatever mmap, munmap and mprotect did in
between, its answer is the walk over the current areas'."""
from hypothesis import example, given, settings, strategies as st

from emu.machine import Machine
from kernel_model.memory.layout import LAYOUTS, PAGE
from kernel_model.memory.vm import MAP_ANONYMOUS, MAP_FIXED, MAP_PRIVATE, PROT_READ, PROT_WRITE, \
    AreaMap

BASE = 0x10000000
PAGES = 12
ANON = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED
PROT_NONE = 0

steps = st.lists(st.tuples(
    st.sampled_from(["map", "unmap", "protect", "ask", "ask"]),
    st.integers(0, PAGES - 1), st.integers(1, 4), st.integers(0, PAGE - 1),
    st.sampled_from([PROT_NONE, PROT_READ, PROT_READ | PROT_WRITE])), min_size=1, max_size=40)


def walked(vm: AreaMap, addr: int, size: int) -> bool:
    """The answer from the areas alone: every byte in an area that is not PROT_NONE."""
    def readable_byte(a):
        return any(v.start <= a < v.end and v.perms for v in vm.vmas)
    return all(readable_byte(a) for a in range(addr, addr + size, 64)) and \
        readable_byte(addr + size - 1)


def test_readable_is_the_walk_s_answer_after_any_change():
    first_guesses = []

    @settings(max_examples=150, deadline=None)
    @given(steps)
    # an area asked about, then unmapped whole: no area is put back in its place
    @example([("map", 0, 1, 0, PROT_READ), ("ask", 0, 1, 0, 0), ("unmap", 0, 1, 0, 0),
              ("ask", 0, 1, 0, 0)])
    def check(program):
        vm = AreaMap(Machine("x86_64"), LAYOUTS["x86_64"])
        for op, page, pages, offset, prot in program:
            start = BASE + page * PAGE
            if op == "map":
                vm.mmap(start, pages * PAGE, prot, ANON)
            elif op == "unmap":
                vm.munmap(start, pages * PAGE)
            elif op == "protect" and vm.vma_at(start) is not None:
                vm.mprotect(start, PAGE, prot)
            elif op == "ask":               # twice: the second may answer from the window
                addr, size = start + offset, pages * 100
                for _ in range(2):
                    window_start, window_stop = vm.readable_window
                    first_guesses.append(window_start <= addr and addr + size <= window_stop)
                    assert vm.readable(addr, size) == walked(vm, addr, size)
    check()
    assert any(first_guesses) and not all(first_guesses)     # both answers were exercised
