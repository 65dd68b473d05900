"""Host pages that several address spaces map at once: the memory behind MAP_SHARED.

Every address space is its own Unicorn instance (emu/machine.py), and guest RAM is host pages
handed to Unicorn with uc_mem_map_ptr (emu/memory.py). Handing the SAME host pages to two
instances is what Linux does with one page frame in two page tables (mm/shmem.c for anonymous
shared memory and /dev/shm, the page cache for a shared file mapping): a store by either
process lands in the one copy, and the other's next load reads it — Unicorn's softmmu resolves
guest addresses to these host addresses and keeps no copy of RAM (docs/unicorn.md).

A SharedPages is held once per Memory piece that maps part of it; the host pages go back when
the last holder lets go (a process exits, execs, or unmaps it), after `on_release` has had a look
at them (a file mapping writes its bytes back to the file).
"""
import ctypes
import itertools

from . import host_pages

# A serial per object: futexes on shared pages are keyed by (serial, offset) (Linux's
# get_futex_key: inode or shmem object and page index), and id() could be reused.
_SERIALS = itertools.count(1)


class SharedPages:
    def __init__(self, size: int, on_release=None):
        self.size = size
        self.host = host_pages.allocate(size)
        self.serial = next(_SERIALS)
        self.holders = 0
        self.on_release = on_release        # called with self before the pages are freed

    def hold(self) -> None:
        self.holders += 1

    def drop(self) -> None:
        self.holders -= 1
        if self.holders == 0:
            if self.on_release is not None:
                self.on_release(self)
            host_pages.free(self.host, self.size)
            self.host = None

    def read(self, offset: int, size: int) -> bytes:
        return ctypes.string_at(self.host + offset, size)

    def write(self, offset: int, data: bytes) -> None:
        ctypes.memmove(self.host + offset, data, len(data))
