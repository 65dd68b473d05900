"""emu.memory: mapping, the region view, host reads/writes, C strings, and the one write path
that keeps translated code in step with memory (docs/unicorn.md item 1)."""
import pytest

from emu.errors import MachineError
from emu.machine import Machine
from emu.memory import PAGE, PROT_EXEC, PROT_READ, PROT_WRITE, MemoryAccessError

from .guest import CODE, RW, RWX, asm, ax, machine_with

R, RX = PROT_READ, PROT_READ | PROT_EXEC


@pytest.fixture
def m(arch) -> Machine:
    return Machine(arch)


def test_map_reports_one_region_with_its_perms(m):
    m.mem.map(0x40000, 3 * PAGE, RW)
    assert m.mem.regions() == [(0x40000, 0x43000, RW)]
    assert m.mem.is_mapped(0x40000, 3 * PAGE)
    assert not m.mem.is_mapped(0x40000, 3 * PAGE + 1)
    assert m.mem.perms_at(0x42FFF) == RW
    assert m.mem.perms_at(0x43000) is None


def test_adjacent_maps_with_equal_perms_merge_and_different_ones_do_not(m):
    m.mem.map(0x40000, PAGE, RW)
    m.mem.map(0x41000, PAGE, RW)
    m.mem.map(0x42000, PAGE, RX)
    assert m.mem.regions() == [(0x40000, 0x42000, RW), (0x42000, 0x43000, RX)]
    assert m.mem.is_mapped(0x40000, 3 * PAGE)      # contiguous across a perms change


def test_unmap_middle_splits_and_holes_are_fine(m):
    m.mem.map(0x40000, 4 * PAGE, RW)
    m.mem.unmap(0x41000, PAGE)
    assert m.mem.regions() == [(0x40000, 0x41000, RW), (0x42000, 0x44000, RW)]
    m.mem.unmap(0x3F000, 3 * PAGE)                  # covers a hole and one mapped page
    assert m.mem.regions() == [(0x42000, 0x44000, RW)]
    m.mem.unmap(0x80000, PAGE)                      # entirely unmapped: munmap semantics, no error
    assert m.mem.regions() == [(0x42000, 0x44000, RW)]


def test_protect_middle_splits_and_spans_holes(m):
    m.mem.map(0x40000, 3 * PAGE, RW)
    m.mem.map(0x45000, PAGE, RW)
    m.mem.protect(0x41000, 5 * PAGE, R)             # the hole 0x43000-0x45000 is skipped
    assert m.mem.regions() == [(0x40000, 0x41000, RW), (0x41000, 0x43000, R), (0x45000, 0x46000, R)]


def test_mapping_over_an_existing_page_is_a_machine_error(m):
    m.mem.map(0x40000, PAGE, RW)
    with pytest.raises(MachineError, match="cannot map 0x40000"):
        m.mem.map(0x40000, PAGE, RW)


def test_read_write_round_trip_across_pages(m):
    m.mem.map(0x40000, 2 * PAGE, RW)
    data = bytes(range(256)) * 3
    m.mem.write(0x40F80, data)
    assert m.mem.read(0x40F80, len(data)) == data
    assert m.mem.read(0x40000, 4) == b"\0\0\0\0"     # fresh pages are zero


@pytest.mark.parametrize("op", ["read", "write"])
def test_unmapped_access_raises_memory_access_error(m, op):
    m.mem.map(0x40000, PAGE, RW)
    with pytest.raises(MemoryAccessError) as info:
        if op == "read":
            m.mem.read(0x40FFE, 4)                  # runs off the end of the mapping
        else:
            m.mem.write(0x50000, b"x")
    assert info.value.address in (0x40FFE, 0x50000)
    assert isinstance(info.value, MachineError)


@pytest.mark.parametrize("fresh", [True, False])
def test_a_negative_size_or_address_is_no_range(m, fresh):
    """Issue 26: writev(1, 0xe, -1) reached read(0xe, -16); with no piece found yet (right
    after a map or protect) the fast path took (0, -1, None) as the piece holding it and
    sliced None (a KernelPanic); with a piece found, it returned b"" for the negative size."""
    m.mem.map(0x40000, PAGE, RW)
    if not fresh:
        m.mem.read(0x40000, 1)                       # the piece is the last hit
    for addr, size in ((0xE, -16), (0x40010, -16), (0x40010, -1), (-16, 8)):
        with pytest.raises(MemoryAccessError):
            m.mem.read(addr, size)


def test_a_huge_read_of_unmapped_memory_allocates_nothing(m):
    """A guest's count of 2**40 bytes over a page that ends: refused before a host buffer of
    that size is made (it raised MemoryError, or took the host's memory)."""
    m.mem.map(0x40000, PAGE, RW)
    with pytest.raises(MemoryAccessError):
        m.mem.read(0x40000, 1 << 40)


def test_read_cstr_crosses_a_page_boundary(m):
    m.mem.map(0x40000, 2 * PAGE, RW)
    m.mem.write(0x40FFC, b"hello world\0tail")
    assert m.mem.read_cstr(0x40FFC) == b"hello world"


def test_read_cstr_running_into_unmapped_memory_raises(m):
    m.mem.map(0x40000, PAGE, RW)
    m.mem.write(0x40FFC, b"abcd")                   # no NUL before the end of the mapping
    with pytest.raises(MemoryAccessError):
        m.mem.read_cstr(0x40FFC)


def test_read_cstr_stops_at_the_limit(m):
    m.mem.map(0x40000, PAGE, RW)
    m.mem.write(0x40000, b"a" * 100)
    assert m.mem.read_cstr(0x40000, limit=10) == b"a" * 10


def test_snapshot_lists_every_region_with_bytes(m):
    m.mem.map(0x40000, PAGE, RW)
    m.mem.map(0x42000, PAGE, R)
    m.mem.write(0x40010, b"abc")
    snap = m.mem.snapshot()
    assert [(s, e, p) for s, e, p, _ in snap] == [(0x40000, 0x41000, RW), (0x42000, 0x43000, R)]
    assert snap[0][3][0x10:0x13] == b"abc" and len(snap[0][3]) == PAGE


# ---- the invariant: patched code runs ------------------------------------------------------

def _run_patch_run(arch, write):
    """Run `mov eax,1; int3`, patch the mov to `mov eax,2` with `write`, run again."""
    m = machine_with(arch, "mov eax, 1; int3")
    first = m.run(CODE)
    assert (first.kind, first.vector) == ("trap", 3) and m.reg(ax(arch)) == 1
    write(m, CODE, asm("mov eax, 2", arch))
    second = m.run(CODE)
    assert (second.kind, second.vector) == ("trap", 3)
    return m.reg(ax(arch))


def test_code_patched_through_mem_write_runs_the_new_code(arch):
    assert _run_patch_run(arch, lambda m, a, b: m.mem.write(a, b)) == 2


def test_raw_unicorn_write_leaves_the_stale_translation_live(arch):
    """Proves the test above is meaningful: without the invalidation, the old code runs."""
    assert _run_patch_run(arch, lambda m, a, b: m.uc.mem_write(a, b)) == 1


def test_code_patched_from_inside_a_trap_handler_runs_on_the_next_pass(arch):
    """The instrumenter patches from hooks: the loop body changes while the guest runs."""
    src = "mov ecx, 3; xor eax, eax; top: add eax, 1; int3; dec ecx; jnz top; int 0x80"
    m = machine_with(arch, src)
    add_at = CODE + len(asm("mov ecx, 3; xor eax, eax", arch))
    patched = []

    def on_trap(vector, pc):
        if vector == 3 and not patched:
            m.mem.write(add_at, asm("add eax, 100", arch, add_at))   # same length as add eax, 1
            patched.append(pc)
        return vector == 3
    m.trap_handler = on_trap
    exit_ = m.run(CODE)
    assert (exit_.kind, exit_.vector) == ("trap", 0x80)
    assert m.reg(ax(arch)) == 1 + 100 + 100


def test_write_to_non_code_page_keeps_code_translations(arch):
    """Data writes must not be mistaken for code patches (and must still land)."""
    m = machine_with(arch, "mov eax, 1; int3", code_perms=RWX)
    m.mem.protect(CODE, PAGE, PROT_READ | PROT_EXEC)
    m.run(CODE)
    m.mem.write(0x20000, b"data")
    assert m.mem.read(0x20000, 4) == b"data"
    m.mem.write(CODE, asm("mov eax, 7", arch))     # read-only to the guest, not to the host
    m.run(CODE)
    assert m.reg(ax(arch)) == 7


def test_reads_and_writes_follow_pieces_that_unmap_cut(m):
    """Each piece of host pages has its own memoryview (emu/memory.py): an unmap that cuts a
    piece must leave views of exactly the parts that stay, at the right host pages."""
    m.mem.map(0x40000, 4 * PAGE, RW)
    for page in range(4):
        m.mem.write(0x40000 + page * PAGE, bytes([page + 1]) * PAGE)
    m.mem.unmap(0x41000, 2 * PAGE)
    assert m.mem.read(0x40FFF, 1) == b"\x01" and m.mem.read(0x43000, 2) == b"\x04\x04"
    m.mem.write(0x40FFE, bytearray(b"ab"))
    m.mem.write(0x43000, memoryview(b"cd"))
    assert bytes(m.uc.mem_read(0x40FFE, 2)) == b"ab"          # Unicorn sees the same pages
    assert bytes(m.uc.mem_read(0x43000, 2)) == b"cd"
    with pytest.raises(MemoryAccessError):
        m.mem.read(0x40FFF, 2)                                  # runs into the hole
    with pytest.raises(MemoryAccessError):
        m.mem.write(0x42FFF, b"xy")


def test_no_view_outlives_the_host_pages(m):
    m.mem.map(0x40000, 2 * PAGE, RW)
    mem = m.mem
    m.close()
    assert mem._views == [] and mem._starts == []


def _text_machine(arch, data: bytes) -> Machine:
    machine = Machine(arch)
    machine.mem.map(0x40000, 4 * PAGE, RX)
    machine.mem.sync(0x40000, data)
    return machine


def test_sync_from_skips_only_text_from_the_same_sync(arch):
    """A fork's recycled text synced from the parent is compared again only if either side
    changed since they shared bytes (emu/memory.py same_source)."""
    text = bytes(range(256)) * (4 * PAGE // 256)
    parent, child = _text_machine(arch, text), _text_machine(arch, bytes(4 * PAGE))
    assert child.mem.sync_from(parent.mem, 0x40000, 4 * PAGE) == 4      # compared, all copied
    assert child.mem.same_source(parent.mem)
    assert child.mem.sync_from(parent.mem, 0x40000, 4 * PAGE) == 0
    parent.mem.write(0x41000, b"\xcc")                                   # a probe's int3
    assert not child.mem.same_source(parent.mem)
    assert child.mem.sync_from(parent.mem, 0x40000, 4 * PAGE) == 1
    assert child.mem.read(0x41000, 2) == b"\xcc\x01"
    child.mem.protect(0x43000, PAGE, RX | PROT_WRITE)                  # the guest may write it
    assert not child.mem.same_source(parent.mem)
    child.mem.protect(0x43000, PAGE, RX)
    # Memory cannot see this write (the guest cannot make one to read-only text); the
    # protects above forgot the token, so the comparison finds it
    child.uc.mem_write(0x43000, b"\x90")
    assert child.mem.sync_from(parent.mem, 0x40000, 4 * PAGE) == 1
    assert child.mem.read(0x40000, 4 * PAGE) == parent.mem.read(0x40000, 4 * PAGE)


def test_writable_text_gets_no_shared_source(arch):
    parent = _text_machine(arch, bytes(4 * PAGE))
    parent.mem.protect(0x40000, 4 * PAGE, RWX)
    child = _text_machine(arch, bytes(4 * PAGE))
    child.mem.protect(0x40000, 4 * PAGE, RWX)
    child.mem.sync_from(parent.mem, 0x40000, 4 * PAGE)
    assert not child.mem.same_source(parent.mem)


def test_sync_of_the_same_bytes_object_skips_until_the_text_changes(arch):
    text = bytes(range(256)) * (4 * PAGE // 256)
    machine = _text_machine(arch, text)
    assert machine.mem.sync(0x40000, text) == 0
    machine.mem.write(0x42000, b"\xcc")
    assert machine.mem.sync(0x40000, text) == 1 and machine.mem.read(0x42000, 1) == b"\x00"
    assert machine.mem.sync(0x40000, bytes(bytearray(text))) == 0    # an equal copy: compared


def test_an_empty_write_changes_nothing_even_over_code(m):
    """Unicorn refuses to drop the translations of an empty range (UcError): nothing to do."""
    m.mem.map(CODE, PAGE, PROT_READ | PROT_EXEC)
    m.mem.write(CODE, b"\x90\x90")
    m.mem.write(CODE + 1, b"")
    assert m.mem.read(CODE, 2) == b"\x90\x90"
