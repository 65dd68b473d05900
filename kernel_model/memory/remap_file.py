"""remap_file_pages(2), as Linux has emulated it since 4.0 (mm/mmap.c): no non-linear mapping
any more, but a new MAP_SHARED | MAP_FIXED mapping of the same file at the page offset asked,
over the pages given.

Its checks in order: prot must be 0, start and size are cut to pages, the range must not wrap
nor the offset overflow (EINVAL); the range must start in a shared file mapping and stay in
contiguous areas of that same file mapping with the same flags (EINVAL). The new mapping keeps
the first area's permissions and lock.
"""
from .. import errno as E
from ..errno import GuestErrno
from .layout import PAGE

PAGE_MASK = ~(PAGE - 1)
MAP_NONBLOCK = 0x10000


def remap_file_pages(vm, page_cache, start: int, size: int, prot: int, pgoff: int, flags: int) -> int:
    if prot:
        raise GuestErrno(E.EINVAL)
    start, size = start & PAGE_MASK, size & PAGE_MASK
    if start + size <= start or pgoff + (size // PAGE) >= 1 << 64:
        raise GuestErrno(E.EINVAL)
    vma = vm.vma_at(start)
    if vma is None or not vma.shared or vma.file is None:
        raise GuestErrno(E.EINVAL)
    _check_following(vm, vma, start + size)
    backing = page_cache.backing(vma.file, pgoff * PAGE, size)
    vm.map_shared_area(start, size, vma.perms, backing, name=vma.name, offset=pgoff * PAGE,
                       may_write=vma.may_write, locked=vma.locked, file=vma.file)
    return 0


def _check_following(vm, first, end: int) -> None:
    """The areas after `first` up to `end`: contiguous, of the same file, with the same flags."""
    previous = first
    while previous.end < end:
        following = vm.vma_at(previous.end)
        if following is None or following.file is not first.file or \
                (following.perms, following.may_write, following.locked) != \
                (first.perms, first.may_write, first.locked):
            raise GuestErrno(E.EINVAL)
        previous = following
