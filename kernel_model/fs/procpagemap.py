"""/proc/PID/pagemap as a file (fs/proc/task_mmu.c proc_pagemap_operations): mode 0400, size
0, seekable to any virtual page's word; a read is made of whole 8-byte words at an offset that
is a multiple of 8 (pagemap_read: EINVAL otherwise) and ends at the top of user space. The
words come from the process (its `pagemap(first_page, count)`: memory/pagemap.py)."""
from typing import Callable

from .. import errno as E
from ..errno import GuestErrno
from .node import BytesHandle, wants_write
from .synthetic import SyntheticNode

PM_ENTRY_BYTES = 8
MAX_READ = 1 << 20                # words computed at a time, whatever count was asked


class PagemapFile(SyntheticNode):
    def __init__(self, mount: str, meta, entries: Callable[[int, int], bytes], pages: int):
        super().__init__(mount, meta)
        self._entries = entries
        self._pages = pages               # user space's pages: the words there are

    def open_handle(self, flags: int) -> BytesHandle:
        if wants_write(flags):
            raise GuestErrno(E.EACCES)
        return _PagemapHandle(self._entries, self._pages, self.stat())


class _PagemapHandle(BytesHandle):
    def __init__(self, entries, pages: int, stat):
        super().__init__(b"", stat)
        self._entries = entries
        self._pages = pages

    def read_at(self, offset: int, n: int) -> bytes:
        if offset % PM_ENTRY_BYTES or n % PM_ENTRY_BYTES:
            raise GuestErrno(E.EINVAL)
        first = offset // PM_ENTRY_BYTES
        count = max(0, min(n, MAX_READ) // PM_ENTRY_BYTES, 0)
        count = min(count, max(0, self._pages - first))
        return self._entries(first, count) if count else b""
