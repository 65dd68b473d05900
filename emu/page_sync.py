"""Syncing a range of guest memory to given bytes, writing only the pages that differ.

Apart from emu/memory.py because it is one use of Memory, not a part of it: a recycled
Machine's text (kernel_model/memory/space_pool.py) is made to hold the bytes of the next
program by comparing page by page, so that the translated code of the pages that did not
change stays valid, and by remembering where the bytes came from (a token per range, kept in
Memory._sources) so that the next sync of the same bytes needs no comparison at all. Memory's
sync() and sync_from() call these functions; Memory keeps the token table because its every
change of a range (unmap, protect, a write into code) must forget the range's token.
"""
import ctypes

from . import host_pages
from .errors import MemoryAccessError
from .perm_map import PROT_WRITE


def sync(memory, addr: int, data: bytes) -> int:
    """Make guest [addr, addr+len(data)) (mapped, one piece) hold `data`, writing only the
    pages that differ, so that the translated code of the others stays valid (a recycled
    Machine's text: kernel_model/memory/space_pool.py). Returns the number of pages written.

    A `bytes` object is its own token (immutable: the same object is the same bytes, and
    the token keeps it alive, so its identity is never reused): exec hands the same object
    for the same file (kernel_model/process/exec.py load_plan), so a Machine that was synced from
    it and not changed since needs no comparison either."""
    if memory._sources.get((addr, len(data))) is data:
        return 0
    source = ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value    # bytes only
    written = _sync(memory, addr, source, len(data))
    _set_source(memory, addr, len(data), data)
    return written


def sync_from(memory, other, addr: int, size: int) -> int:
    """sync() with the bytes `other` holds at the same range (a fork's recycled text):
    nothing to compare when both hold them from the same sync (same_source)."""
    key = (addr, size)
    token = other._sources.get(key)
    if token is not None and memory._sources.get(key) is token:
        return 0
    source = other._host_address(addr, size)
    if source is None:
        raise MemoryAccessError(addr, size)
    written = _sync(memory, addr, source, size)
    if token is None:
        token = object()
        _set_source(other, addr, size, token)
    _set_source(memory, addr, size, token)
    return written


def _set_source(memory, addr: int, size: int, token: object) -> None:
    """Record the token of [addr, addr+size) if nothing but Memory's own write path can
    change it: a range the guest may write (RWX) could change behind our back."""
    if all(not perms & PROT_WRITE for start, end, perms in memory._perms.entries()
           if start < addr + size and end > addr):
        memory._sources[(addr, size)] = token


def _sync(memory, addr: int, source: int, size: int) -> int:
    host = memory._host_address(addr, size)
    if host is None:
        raise MemoryAccessError(addr, size)
    if host_pages.equal(host, source, size):
        return 0
    written = 0
    for offset in range(0, size, host_pages.PAGE):
        length = min(host_pages.PAGE, size - offset)
        if not host_pages.equal(host + offset, source + offset, length):
            ctypes.memmove(host + offset, source + offset, length)
            memory.code_epoch += 1
            memory._uc.ctl_remove_cache(addr + offset, addr + offset + length)
            written += 1
    return written
