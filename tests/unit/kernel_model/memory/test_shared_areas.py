"""MAP_SHARED areas between address spaces (issue 32): a fork shares them instead of copying,
the other side keeps them when one side is released (exit, exec), a file's shared pages are one
copy for every mapping of the file (kernel_model/memory/page_cache.py) and go back to the file
on msync and when the last mapping goes, and a futex in them is one futex for every process."""
from kernel_model.fs.records import StatResult
from kernel_model.memory.futex_key import futex_key
from kernel_model.memory.layout import PAGE
from kernel_model.memory.page_cache import PageCache
from kernel_model.memory.remap import MREMAP_MAYMOVE, mremap
from kernel_model.memory.vm import MAP_ANONYMOUS, MAP_FIXED, MAP_PRIVATE, MAP_SHARED, PROT_READ, PROT_WRITE
from kernel_model.process.fork import copy_space

from ..userland import user_program

RW = PROT_READ | PROT_WRITE
SHARED_AT, PRIVATE_AT = 0x0070_0000, 0x0080_0000


class FakeNode:
    """A file's inode: open_handle gives the writer the page cache keeps (vm_file)."""
    def __init__(self, file):
        self.file = file

    def open_handle(self, flags):
        return self.file


class FakeFile:
    """An open file and its handle at once: bytes, an identity, read and write."""
    def __init__(self, data: bytes, ino: int = 7, writable: bool = True):
        self.data = bytearray(data)
        self.ino, self.writable, self.readable = ino, writable, True
        self.node = FakeNode(self)
        self.closed = 0

    def stat(self):
        return StatResult(1, self.ino, 0o100600, 1, 0, 0, 0, len(self.data), 4096, 0, 0, 0, 0)

    def pread(self, n, offset):
        return bytes(self.data[offset:offset + n])

    def size(self):
        return len(self.data)

    def write_at(self, offset, data):
        self.data[offset:offset + len(data)] = data
        return len(data)

    def close(self):
        self.closed += 1


def parent_with_areas(arch):
    parent = user_program(arch, "nop", enter=False).space
    parent.vm.mmap(SHARED_AT, 2 * PAGE, RW, MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED)
    parent.vm.mmap(PRIVATE_AT, PAGE, RW, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED)
    return parent


def test_a_fork_shares_shared_areas_and_copies_private_ones(arch):
    parent = parent_with_areas(arch)
    parent.machine.mem.write(SHARED_AT + PAGE, b"before")
    child = copy_space(parent, 4 << 30)
    assert child.vm.vma_at(SHARED_AT).shared and not child.vm.vma_at(PRIVATE_AT).shared
    child.machine.mem.write(SHARED_AT + PAGE, b"child!")
    child.machine.mem.write(PRIVATE_AT, b"child!")
    assert parent.machine.mem.read(SHARED_AT + PAGE, 6) == b"child!"
    assert parent.machine.mem.read(PRIVATE_AT, 6) == bytes(6)
    parent.machine.mem.write(SHARED_AT, b"parent")
    assert child.machine.mem.read(SHARED_AT, 6) == b"parent"


def test_the_other_side_keeps_the_pages_when_one_side_is_released(arch):
    parent = parent_with_areas(arch)
    child = copy_space(parent, 4 << 30)
    parent.machine.mem.write(SHARED_AT, b"kept")
    parent.release()                                  # the parent execs or exits
    assert child.machine.mem.read(SHARED_AT, 4) == b"kept"
    grandchild = copy_space(child, 4 << 30)
    grandchild.machine.mem.write(SHARED_AT, b"more")
    assert child.machine.mem.read(SHARED_AT, 4) == b"more"


def test_a_futex_in_a_shared_area_is_one_futex_for_both_processes(arch):
    parent = parent_with_areas(arch)
    child = copy_space(parent, 4 << 30)
    assert futex_key(parent, SHARED_AT + 8) == futex_key(child, SHARED_AT + 8)
    assert futex_key(parent, SHARED_AT + 8) != futex_key(parent, SHARED_AT + 12)
    # Private memory, or a FUTEX_PRIVATE_FLAG futex, is the address space's own.
    assert futex_key(parent, PRIVATE_AT) != futex_key(child, PRIVATE_AT)
    assert futex_key(parent, SHARED_AT, private=True) != futex_key(child, SHARED_AT, private=True)


def test_two_mappings_of_a_file_map_one_copy_of_its_pages(arch):
    cache, f = PageCache(), FakeFile(b"A" * PAGE + b"B" * PAGE + b"C" * PAGE)
    one = user_program(arch, "nop", enter=False).space
    other = user_program(arch, "nop", enter=False).space
    # [0, 2 pages) in one; [1, 3 pages) in the other: page 1 is in both, page 2 is new.
    a = one.vm.mmap(0, 2 * PAGE, RW, MAP_SHARED, backing=lambda size: cache.backing(f, 0, size))
    b = other.vm.mmap(0, 2 * PAGE, RW, MAP_SHARED, backing=lambda size: cache.backing(f, PAGE, size))
    assert other.machine.mem.read(b, 1) + other.machine.mem.read(b + PAGE, 1) == b"BC"
    one.machine.mem.write(a + PAGE, b"shared")
    assert other.machine.mem.read(b, 6) == b"shared"
    assert f.data[PAGE:PAGE + 6] == b"BBBBBB"           # not yet written back
    cache.sync_mapped(other.machine.mem, b, PAGE)       # msync of the other's first page
    assert f.data[PAGE:PAGE + 6] == b"shared"
    other.machine.mem.write(b + PAGE, b"last")
    other.release()                                     # the last mapping of page 2 goes
    assert f.data[2 * PAGE:2 * PAGE + 4] == b"last" and f.closed == 1


def test_write_back_stops_at_the_end_of_the_file(arch):
    cache, f = PageCache(), FakeFile(b"short")
    space = user_program(arch, "nop", enter=False).space
    at = space.vm.mmap(0, PAGE, RW, MAP_SHARED, backing=lambda size: cache.backing(f, 0, size))
    space.machine.mem.write(at, b"SHORT and beyond the end")
    space.release()
    assert bytes(f.data) == b"SHORT"                    # i_size bounds what the file holds


def test_mremap_moves_a_shared_area_without_unsharing_it(arch):
    parent = parent_with_areas(arch)
    child = copy_space(parent, 4 << 30)
    parent.vm.mmap(SHARED_AT + 2 * PAGE, PAGE, RW, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED)  # no room
    moved = mremap(parent.vm, SHARED_AT, 2 * PAGE, 3 * PAGE, MREMAP_MAYMOVE, 0)
    assert moved != SHARED_AT and parent.vm.vma_at(SHARED_AT) is None
    assert parent.vm.vma_at(moved).shared and parent.vm.vma_at(moved).end == moved + 3 * PAGE
    child.machine.mem.write(SHARED_AT + PAGE, b"seen")
    assert parent.machine.mem.read(moved + PAGE, 4) == b"seen"
    parent.machine.mem.write(moved + 2 * PAGE, b"new part")       # the grown page is mapped


def test_mremap_grows_a_shared_area_in_place_when_there_is_room(arch):
    parent = parent_with_areas(arch)
    child = copy_space(parent, 4 << 30)
    assert mremap(parent.vm, SHARED_AT, 2 * PAGE, 3 * PAGE, 0, 0) == SHARED_AT
    child.machine.mem.write(SHARED_AT, b"still")
    assert parent.machine.mem.read(SHARED_AT, 5) == b"still"
    assert parent.vm.vma_at(SHARED_AT + 2 * PAGE).shared


def test_a_private_mapping_starts_from_the_shared_pages_bytes(arch):
    cache, f = PageCache(), FakeFile(b"A" * PAGE + b"B" * PAGE)
    space = user_program(arch, "nop", enter=False).space
    at = space.vm.mmap(0, PAGE, RW, MAP_SHARED, backing=lambda size: cache.backing(f, PAGE, size))
    space.machine.mem.write(at + 2, b"stored")            # not written back yet
    assert cache.cached(f, 0, f.pread(2 * PAGE, 0))[PAGE:PAGE + 10] == b"BBstoredBB"
    assert cache.cached(f, 0, b"AAAA") == b"AAAA"
    assert PageCache().cached(f, PAGE, b"BB") == b"BB"
