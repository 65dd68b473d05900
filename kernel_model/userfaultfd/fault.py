"""A page fault in a range a userfaultfd registered (mm/memory.c do_anonymous_page and
do_wp_page reaching fs/userfaultfd.c handle_userfault).

A missing page (no Machine page: never touched before the registration, or emptied by
mremap's MREMAP_DONTUNMAP) of a range registered for missing pages, or a write to a page
UFFDIO_WRITEPROTECT protects, queues a message and the thread sleeps (or, with
UFFD_FEATURE_SIGBUS, the fault is SIGBUS). A missing page of anonymous memory that no
userfaultfd watches (any more) gets a zero page, as do_anonymous_page gives one.
"""
from ..blocking import WouldBlock
from ..memory.layout import PAGE
from .abi import (UFFD_FEATURE_SIGBUS, UFFD_PAGEFAULT_FLAG_WP, UFFD_PAGEFAULT_FLAG_WRITE,
                  UFFDIO_REGISTER_MODE_MISSING)

RETRY, SIGBUS = "retry", "sigbus"


def userfault(space, thread, address: int, write: bool, missing: bool) -> str | None:
    """RETRY when the instruction must run again (the thread may be asleep by then), SIGBUS,
    or None when the fault is none of userfaultfd's."""
    vma = space.vm.vma_at(address)
    if vma is None or not vma.perms or vma.file is not None or vma.shared:
        return None
    page = address & ~(PAGE - 1)
    for uffd in space.userfaults:
        reg = uffd.registration_at(address)
        if reg is None:
            continue
        if missing and reg.mode & UFFDIO_REGISTER_MODE_MISSING:
            flags = UFFD_PAGEFAULT_FLAG_WRITE if write else 0
        elif not missing and write and page in reg.protected:
            flags = UFFD_PAGEFAULT_FLAG_WP | UFFD_PAGEFAULT_FLAG_WRITE
        else:
            continue
        if uffd.features & UFFD_FEATURE_SIGBUS:
            return SIGBUS
        uffd.queue_fault(thread, address, flags)
        return RETRY
    if missing and space.machine.mem.unbacked(page, PAGE):
        space.machine.mem.map(page, PAGE, vma.perms)
        return RETRY
    return None


def kernel_access(ctx, address: int, size: int, write: bool) -> None:
    """A copy to or from the user by a system call (copy_to_user, copy_from_user) that meets
    a missing page of a range registered for missing pages faults as the program would: the
    message is queued and the call sleeps until the page is resolved, then runs again
    (WouldBlock). Called only while the address space has userfaultfds."""
    mem, space = ctx.mem, ctx.space
    for lo, _ in mem.unbacked(address & ~(PAGE - 1), size + (address & (PAGE - 1))):
        for uffd in space.userfaults:
            reg = uffd.registration_at(lo)
            if reg is not None and reg.mode & UFFDIO_REGISTER_MODE_MISSING:
                page = uffd.post_fault(ctx.thread, max(lo, address),
                                       UFFD_PAGEFAULT_FLAG_WRITE if write else 0)
                raise WouldBlock(uffd.fault_channel(page), f"userfaultfd fault at {lo:#x}")
