"""madvise(2) on an AreaMap, as mm/madvise.c do_madvise answers it.

The advice must be one the kernel knows (EINVAL: KSM's MERGEABLE/UNMERGEABLE and memory-failure
injection are not configured, as KSM is not modeled), the start page aligned, the range not
wrapping (EINVAL); an empty range is 0. Then each area of the range is advised in turn: an
error there ends the call, a hole is remembered and answered (ENOMEM) when the walk is done.

What an advice does to an area, with its refusals:
- DONTNEED, FREE, COLD, PAGEOUT: not on a locked area (EINVAL); FREE only on anonymous memory.
  DONTNEED and FREE make private anonymous pages read back as zeros.
- REMOVE: a shared writable file mapping (EINVAL without a file, EACCES otherwise); not locked.
- WIPEONFORK: private anonymous memory only (EINVAL): a forked child gets zero pages there.
  KEEPONFORK undoes it; DONTFORK leaves the area out of a child; DOFORK puts it back.
- the others (NORMAL, RANDOM, SEQUENTIAL, WILLNEED, HUGEPAGE, NOHUGEPAGE, DONTDUMP, DODUMP,
  POPULATE_*, DONTNEED_LOCKED, COLLAPSE) change nothing the model can show: every page is
  resident and there is no paging.
"""
from .. import errno as E
from ..errno import GuestErrno
from .layout import PAGE
from .vm import AreaMap, Vma, page_up

(MADV_NORMAL, MADV_RANDOM, MADV_SEQUENTIAL, MADV_WILLNEED, MADV_DONTNEED) = range(5)
MADV_FREE, MADV_REMOVE, MADV_DONTFORK, MADV_DOFORK = 8, 9, 10, 11
MADV_HUGEPAGE, MADV_NOHUGEPAGE, MADV_DONTDUMP, MADV_DODUMP = 14, 15, 16, 17
MADV_WIPEONFORK, MADV_KEEPONFORK, MADV_COLD, MADV_PAGEOUT = 18, 19, 20, 21
MADV_POPULATE_READ, MADV_POPULATE_WRITE, MADV_DONTNEED_LOCKED, MADV_COLLAPSE = 22, 23, 24, 25
KNOWN = frozenset({0, 1, 2, 3, 4, 8, 9, 10, 11, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25})
WORD64 = (1 << 64) - 1
SPECIAL_NAMES = (b"[vdso]", b"[vvar]", b"[vsyscall]")


def madvise(vm: AreaMap, start: int, length: int, advice: int) -> None:
    if advice not in KNOWN or start % PAGE:
        raise GuestErrno(E.EINVAL)
    size = page_up(length) & WORD64           # the kernel's unsigned long: PAGE_ALIGN may wrap
    if length and not size or start + size >= 1 << 64:
        raise GuestErrno(E.EINVAL)
    end = start + size
    if end == start:
        return
    hole, at = False, start
    for vma in sorted((v for v in vm.vmas if v.start < end and v.end > start), key=lambda v: v.start):
        hole |= vma.start > at
        lo, hi = max(vma.start, start), min(vma.end, end)
        _advise(vm, vma, lo, hi, advice)
        at = hi
    if hole or at < end:
        raise GuestErrno(E.ENOMEM)


def _anonymous(vma: Vma) -> bool:
    return not vma.name or vma.name in (b"[heap]", b"[stack]")


def _advise(vm: AreaMap, vma: Vma, lo: int, hi: int, advice: int) -> None:
    if advice in (MADV_DONTNEED, MADV_FREE, MADV_COLD, MADV_PAGEOUT):
        if vma.locked:
            raise GuestErrno(E.EINVAL)           # can_madv_lru_vma
        if advice == MADV_FREE and not (_anonymous(vma) and not vma.shared):
            raise GuestErrno(E.EINVAL)
        if advice in (MADV_DONTNEED, MADV_FREE) and _anonymous(vma) and not vma.shared:
            for a, b in vm.backed_parts(lo, hi):        # zero-fill-on-demand pages again
                vm.machine.mem.write(a, bytes(b - a))
    elif advice == MADV_REMOVE:
        if vma.locked or _anonymous(vma) and not vma.shared:
            raise GuestErrno(E.EINVAL)
        if not vma.shared or not vma.perms & 2:
            raise GuestErrno(E.EACCES)
    elif advice in (MADV_WIPEONFORK, MADV_KEEPONFORK):
        if vma.shared or not _anonymous(vma) or vma.name in SPECIAL_NAMES:
            raise GuestErrno(E.EINVAL)
        vm.set_flags(lo, hi, wipe_on_fork=advice == MADV_WIPEONFORK)
    elif advice in (MADV_DONTFORK, MADV_DOFORK):
        vm.set_flags(lo, hi, dont_fork=advice == MADV_DONTFORK)
