"""Memory sealing (mm/mseal.c, Linux 6.10): mseal marks the areas of a range VM_SEALED
(vma.py), and from then on the calls that would unmap, move, resize or re-protect any page of
a sealed area answer EPERM and change nothing: munmap, mremap (its source, and a MREMAP_FIXED
destination), mprotect, mmap with MAP_FIXED over it (can_modify_mm), and the advice that
discards the contents of a sealed area the process could not write back (can_modify_mm_madv:
anonymous or private areas without PROT_WRITE). A child inherits the seals with its copy of
the areas; exec's new address space has none."""
from .. import errno as E
from ..errno import GuestErrno
from .advice import (MADV_DONTFORK, MADV_DONTNEED, MADV_DONTNEED_LOCKED, MADV_FREE,
                     MADV_REMOVE, MADV_WIPEONFORK)
from .layout import PAGE
from .vm import PROT_WRITE

MADV_DISCARDING = frozenset({MADV_DONTNEED, MADV_FREE, MADV_DONTNEED_LOCKED, MADV_REMOVE,
                             MADV_DONTFORK, MADV_WIPEONFORK})


def seal(vm, start: int, length: int, flags: int, word_bits: int = 64) -> None:
    """do_mseal: no flag is defined (EINVAL), the start page aligned, the length rounded up to
    pages without wrapping (EINVAL); the whole range mapped (ENOMEM: nothing is sealed then).
    The arithmetic is the kernel's unsigned long, `word_bits` wide: the model shows an i386
    guest a 32-bit kernel (uname's i686), where a length near 4 GiB wraps (EINVAL) as LTP's
    mseal02 expects when tst_is_compat_mode() is false."""
    end = start + (length + PAGE - 1) // PAGE * PAGE
    if flags or start % PAGE or length and end == start or end >= 1 << word_bits:
        raise GuestErrno(E.EINVAL)
    if end == start:
        return
    vm.areas_covering(start, end)
    vm.set_flags(start, end, sealed=True)


def refuse_sealed(vm, start: int, length: int) -> None:
    """EPERM when a page of [start, start+length) lies in a sealed area (can_modify_mm)."""
    end = start + (length + PAGE - 1) // PAGE * PAGE
    if any(vma.sealed for vma in vm.vmas_overlapping(start, end)):
        raise GuestErrno(E.EPERM)


def refuse_sealed_discard(vm, start: int, length: int, advice: int) -> None:
    """can_modify_mm_madv: discarding advice on a sealed area the process cannot write."""
    if advice not in MADV_DISCARDING:
        return
    end = start + (length + PAGE - 1) // PAGE * PAGE
    for vma in vm.vmas_overlapping(start, end):
        if vma.sealed and not vma.shared and not vma.perms & PROT_WRITE:
            raise GuestErrno(E.EPERM)
