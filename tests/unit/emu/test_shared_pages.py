"""emu.shared_pages and Memory.map_shared: one set of host pages in several Unicorn instances
(MAP_SHARED between address spaces), held per piece and freed with the last holder."""
from emu.memory import PAGE
from emu.shared_pages import SharedPages

from .guest import CODE, DATA, RW, asm, machine_with

SHARED = 0x40000


def store_and_load(arch: str, value: int) -> str:
    """Store `value` in the shared page's first word, then load it back into the accumulator."""
    return f"mov dword ptr [{SHARED:#x}], {value:#x}; mov eax, dword ptr [{SHARED:#x}]"


def two_machines_sharing(arch: str, size: int = PAGE):
    pages = SharedPages(size)
    machines = [machine_with(arch, "nop") for _ in range(2)]
    for m in machines:
        m.mem.map_shared(SHARED, size, RW, pages, 0)
    return pages, machines


def run_code(m, arch: str, source: str) -> None:
    code = asm(source, arch)
    m.mem.write(CODE, code)
    m.run(CODE, until=CODE + len(code))


def test_a_store_by_one_machine_is_seen_by_the_other(arch):
    pages, (a, b) = two_machines_sharing(arch)
    run_code(a, arch, store_and_load(arch, 0x1234))
    assert b.mem.read(SHARED, 4) == (0x1234).to_bytes(4, "little")
    run_code(b, arch, f"mov eax, dword ptr [{SHARED:#x}]")
    assert b.reg("eax") == 0x1234
    assert pages.holders == 2


def test_pages_live_until_the_last_holder_lets_go(arch):
    pages, (a, b) = two_machines_sharing(arch)
    released = []
    pages.on_release = released.append
    a.close()
    assert pages.holders == 1 and pages.host is not None and released == []
    b.mem.write(SHARED, b"still here")
    assert pages.read(0, 10) == b"still here"
    b.close()
    assert released == [pages] and pages.host is None


def test_a_partial_unmap_keeps_the_rest_shared(arch):
    pages, (a, b) = two_machines_sharing(arch, 3 * PAGE)
    a.mem.unmap(SHARED + PAGE, PAGE)          # a's piece is cut in two: two holders from a
    assert pages.holders == 3
    a.mem.write(SHARED + 2 * PAGE, b"tail")
    assert b.mem.read(SHARED + 2 * PAGE, 4) == b"tail"
    assert a.mem.shared_at(SHARED + 2 * PAGE + 8) == (pages, 2 * PAGE + 8)
    assert a.mem.shared_at(SHARED + PAGE) is None
    assert a.mem.shared_at(DATA) is None


def test_share_from_maps_the_same_pages_and_copies_private_ones(arch):
    pages, (a, _) = two_machines_sharing(arch)
    a.mem.write(DATA, b"private")
    child = machine_with(arch, "nop")
    child.mem.share_from(a.mem, SHARED, PAGE, RW)
    child.mem.unmap(DATA, PAGE)
    child.mem.share_from(a.mem, DATA, PAGE, RW)          # not shared pages: a copy
    a.mem.write(SHARED, b"new")
    a.mem.write(DATA, b"changed")
    assert child.mem.read(SHARED, 3) == b"new"
    assert child.mem.read(DATA, 7) == b"private"
