"""A userfaultfd's registered ranges (fs/userfaultfd.c userfaultfd_register) and what their
end gives the pages: apart from context.py so that the ioctls (ioctl.py) and the file
(context.py) both use them without importing each other."""
from dataclasses import dataclass

from ..memory.layout import PAGE


@dataclass
class Registration:
    """A registered range [start, end) and its modes (VM_UFFD_MISSING, VM_UFFD_WP), with the
    pages UFFDIO_WRITEPROTECT protects now."""
    start: int
    end: int
    mode: int
    protected: set



def fill_missing(space, start: int, end: int) -> None:
    """Zero pages where a range no userfaultfd watches any more has none: what a fault
    there would give (do_anonymous_page), so that no page of anonymous memory is left
    without one outside a registration (a copy by the kernel finds a page)."""
    if space.released:
        return
    mem = space.machine.mem
    for lo, hi in mem.unbacked(start, end - start):
        for vma in space.vm.vmas_overlapping(lo, hi):
            if vma.perms and vma.file is None and not vma.shared:
                a, b = max(vma.start, lo), min(vma.end, hi)
                mem.map(a, b - a, vma.perms)


def unprotect(space, reg: Registration, start: int, end: int) -> None:
    """Give the pages of [start, end) that UFFDIO_WRITEPROTECT protected their area's
    permissions back."""
    for page in sorted(p for p in reg.protected if start <= p < end):
        reg.protected.discard(page)
        vma = space.vm.vma_at(page)
        if vma is not None and not space.machine.mem.unbacked(page, PAGE):
            space.machine.mem.protect(page, PAGE, vma.perms)
