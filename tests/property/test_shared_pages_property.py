"""MAP_SHARED between address spaces (emu/shared_pages.py): two Unicorn instances map one set
of host pages, and whatever the order in which they run, a store made by one is what the
other's next instruction loads — no copy, no delay, no schedule that loses it."""
from hypothesis import given, settings, strategies as st

from emu.memory import PAGE
from emu.shared_pages import SharedPages
from tests.unit.emu.guest import CODE, RW, asm, machine_with

SHARED = 0x40000


def two_machines_sharing(arch: str):
    pages = SharedPages(PAGE)
    machines = [machine_with(arch, "nop") for _ in range(2)]
    for m in machines:
        m.mem.map_shared(SHARED, PAGE, RW, pages, 0)
    return pages, machines

@settings(max_examples=25, deadline=None)
@given(arch=st.sampled_from(("i386", "x86_64")),
       schedule=st.lists(st.tuples(st.integers(0, 1), st.integers(0, 0xFFFFFFFF)), min_size=1,
                         max_size=12))
def test_property_every_store_is_seen_by_the_other_at_its_next_instruction(arch, schedule):
    """Whatever the order in which the two address spaces run, the instruction after a store
    in one of them — run in the other — loads exactly what was stored."""
    _, machines = two_machines_sharing(arch)
    load = asm(f"mov eax, dword ptr [{SHARED:#x}]", arch)
    crossings = 0
    for who, value in schedule:
        store = asm(f"mov dword ptr [{SHARED:#x}], {value:#x}", arch)
        machines[who].mem.write(CODE, store)
        machines[who].run(CODE, until=CODE + len(store))
        other = machines[1 - who]
        other.mem.write(CODE, load)
        other.run(CODE, until=CODE + len(load))
        assert other.reg("eax") == value
        crossings += 1
    assert crossings == len(schedule) > 0
    for m in machines:
        m.close()
