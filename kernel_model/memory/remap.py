"""mremap(2) on an AreaMap, in the order of Linux's mm/mremap.c.

The flags are checked first (unknown ones, MREMAP_FIXED without MREMAP_MAYMOVE: EINVAL), then
the old address's alignment and the new length. Shrinking unmaps the tail and looks at no
area. MREMAP_FIXED (mremap_to) checks the new address (aligned, in user space, not
overlapping the old range: EINVAL), unmaps what lies there, then moves. Growing or moving
needs the old range inside one area (vma_to_resize: EFAULT); an area that ends where the old
range ends grows in place when the pages after it are free, else it moves if it may
(ENOMEM if not). A move keeps the area's permissions, name, offset and lock, and takes its
pages along: a shared area's are the same pages at the new place (move_vma moves page table
entries, so the processes sharing them still do), a private one's bytes are copied.
"""
from .. import errno as E
from ..errno import GuestErrno
from emu.shared_pages import SharedPages
from .layout import PAGE
from .vm import AreaMap, Vma, page_up

MREMAP_MAYMOVE, MREMAP_FIXED, MREMAP_DONTUNMAP = 1, 2, 4


def mremap(vm: AreaMap, old_addr: int, old_size: int, new_size: int, flags: int,
           new_addr: int, missing_watched=lambda page: False) -> int:
    """The area's new start, or GuestErrno. MREMAP_DONTUNMAP is always a move of the same
    size (with MREMAP_MAYMOVE, the sizes as given equal: EINVAL otherwise); it leaves no
    page at the old place where `missing_watched` (a userfaultfd's registration) says so."""
    if flags & ~(MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP) or \
            flags & MREMAP_FIXED and not flags & MREMAP_MAYMOVE or old_addr % PAGE or \
            flags & MREMAP_DONTUNMAP and (not flags & MREMAP_MAYMOVE or old_size != new_size):
        raise GuestErrno(E.EINVAL)
    old_size, new_size = page_up(old_size), page_up(new_size)
    if not new_size:
        raise GuestErrno(E.EINVAL)
    if flags & MREMAP_FIXED:
        return _remap_to(vm, old_addr, old_size, new_size, new_addr,
                         missing_watched if flags & MREMAP_DONTUNMAP else None)
    if flags & MREMAP_DONTUNMAP:
        vma = _area_to_resize(vm, old_addr, old_size, new_size)
        hint = new_addr if new_addr % PAGE == 0 and new_addr >= 0x10000 and \
            _free(vm, new_addr, new_size) else None          # get_unmapped_area's hint
        target = hint if hint is not None else vm.find_free(new_size)
        return _move(vm, vma, old_addr, old_size, new_size, target, missing_watched)
    if old_size >= new_size:
        if old_size > new_size:
            vm.munmap(old_addr + new_size, old_size - new_size)
        return old_addr
    vma = _area_to_resize(vm, old_addr, old_size, new_size)
    end = old_addr + old_size
    if end == vma.end and _free(vm, end, new_size - old_size):
        return _grow_in_place(vm, vma, old_addr, old_size, new_size)
    if not flags & MREMAP_MAYMOVE:
        raise GuestErrno(E.ENOMEM)
    return _move(vm, vma, old_addr, old_size, new_size, vm.find_free(new_size))


def _remap_to(vm: AreaMap, old_addr: int, old_size: int, new_size: int, new_addr: int,
              dontunmap=None) -> int:
    if new_addr % PAGE or new_size > vm.layout.user_top or new_addr > vm.layout.user_top - new_size:
        raise GuestErrno(E.EINVAL)
    if old_addr + old_size > new_addr and new_addr + new_size > old_addr:
        raise GuestErrno(E.EINVAL)          # the old and new ranges must not overlap
    vm.remove_range(new_addr, new_addr + new_size)
    if old_size > new_size:
        vm.munmap(old_addr + new_size, old_size - new_size)
        old_size = new_size
    vma = _area_to_resize(vm, old_addr, old_size, new_size)
    return _move(vm, vma, old_addr, old_size, new_size, new_addr, dontunmap)


def _area_to_resize(vm: AreaMap, addr: int, old_size: int, new_size: int) -> Vma:
    """vma_to_resize: the one area holding [addr, addr+old_size)."""
    vma = vm.vma_at(addr)
    if vma is None or old_size > vma.end - addr:
        raise GuestErrno(E.EFAULT)          # no area, or the range crosses its end
    if not old_size and not vma.shared:
        raise GuestErrno(E.EINVAL)          # a zero old size duplicates shared areas only
    return vma


def _free(vm: AreaMap, start: int, size: int) -> bool:
    return start + size <= vm.layout.user_top and vm.is_free(start, start + size)


def _grow_in_place(vm: AreaMap, vma: Vma, old_addr: int, old_size: int, new_size: int) -> int:
    end, extra = old_addr + old_size, new_size - old_size
    offset = vma.offset + (end - vma.start)
    if vma.shared:
        vm.map_shared_area(end, extra, vma.perms, [(SharedPages(extra), 0, extra)], name=vma.name,
                           offset=offset, may_write=vma.may_write, locked=vma.locked,
                           file=vma.file)
    else:
        vm.map_area(end, extra, vma.perms, name=vma.name, offset=offset, locked=vma.locked)
    return old_addr


def _move(vm: AreaMap, vma: Vma, old_addr: int, old_size: int, new_size: int, target: int,
          dontunmap=None) -> int:
    """move_vma: the old range's pages at `target`, grown to new_size; then the old range goes,
    or with MREMAP_DONTUNMAP (`dontunmap`, its missing_watched) stays, unlocked, without its
    pages (_leave_empty)."""
    mem = vm.machine.mem
    offset = vma.offset + (old_addr - vma.start)
    extra = new_size - old_size
    if vma.shared:
        pieces = [(pages, at, hi - lo) for lo, hi, pages, at in mem.shared_pieces(old_addr, old_size)]
        if extra:
            pieces.append((SharedPages(extra), 0, extra))
        # The new place holds the pages before the old one lets go of them.
        vm.map_shared_area(target, new_size, vma.perms, pieces, name=vma.name, offset=offset,
                           may_write=vma.may_write, locked=vma.locked, file=vma.file)
    else:
        data = b""              # a PROT_NONE range never touched has no pages to carry
        if vm.backed_parts(old_addr, old_addr + old_size):
            vm.back(old_addr, old_addr + old_size)
            data = mem.read(old_addr, old_size)  # the kernel's view: whatever the protection
        vm.map_area(target, new_size, vma.perms, name=vma.name, offset=offset, locked=vma.locked,
                    data=data)
    if dontunmap is not None:
        _leave_empty(vm, vma, old_addr, old_addr + old_size, dontunmap)
    else:
        vm.remove_range(old_addr, old_addr + old_size)
    return target


def _leave_empty(vm: AreaMap, vma: Vma, start: int, end: int, missing_watched) -> None:
    """What MREMAP_DONTUNMAP leaves at the old place: the area without VM_LOCKED, and with no
    pages for a private one (move_page_tables took them), so that its next access is a
    missing-page fault. Where a userfaultfd watches for missing pages the Machine has none
    (the fault is the userfaultfd's: userfaultfd/fault.py); elsewhere what that fault would
    give is there already, a zero page or the file's page read in again, so that a copy by
    the kernel (read(2) into it) finds a page as Linux's fault in copy_to_user makes one. A
    shared area's pages are still the file's or the shared memory's."""
    if vma.locked:
        vm.set_flags(start, end, locked=False)
    if vma.shared:
        return
    mem = vm.machine.mem
    mem.unmap(start, end - start)
    offset = vma.offset + (start - vma.start)
    for page in range(start, end, PAGE):
        if missing_watched(page) or not vma.perms:
            continue
        if vma.file is None:
            mem.map(page, PAGE, vma.perms)
        elif offset + page - start < vma.file.stat().size:
            mem.map(page, PAGE, vma.perms)
            mem.write(page, vma.file.pread(PAGE, offset + page - start))
