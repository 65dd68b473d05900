"""A fault in a file mapping's page that has no pages: the file holds no byte of it.

mmap gives an area of a regular file pages only for the pages that hold a byte of the file
(pages_of_file): a MAP_SHARED one the page cache's, a MAP_PRIVATE one a copy of the bytes; the
rest of the area has none, and an access there faults.
Linux's filemap_fault (mm/filemap.c) answers such a fault by the file's size now: a page
past its end is VM_FAULT_SIGBUS, which arch/x86/mm/fault.c do_sigbus makes SIGBUS with
BUS_ADRERR at the address; a page the file has grown over since is read in and the access
made again. It does so for private mappings too (their faults reach filemap_fault through
do_read_fault and do_cow_fault alike): there the page read in is the process's own copy.
"""
from .layout import PAGE

RETRY, SIGBUS = "retry", "sigbus"


def pages_of_file(f, offset: int, size: int) -> int:
    """How many bytes of a mapping of `size` bytes at file `offset` lie on pages that hold a
    byte of the file (whole pages; 0 when the mapping starts at or past the end)."""
    held = f.stat().size - offset
    return max(0, min(size, (held + PAGE - 1) // PAGE * PAGE))


def file_page_fault(space, page_cache, address: int) -> str | None:
    """RETRY once the page at `address` has the file's pages, SIGBUS past the file's end, None
    when the address is no page-less page of a file mapping the process may access (a
    PROT_NONE one is SEGV_ACCERR before any fault: do_user_addr_fault's access_error)."""
    vma = space.vm.vma_at(address)
    if vma is None or vma.file is None or not vma.perms:
        return None
    page = address & ~(PAGE - 1)
    if not space.machine.mem.unbacked(page, PAGE):
        return None                            # it has pages: a protection fault
    offset = vma.offset + (page - vma.start)
    if offset >= vma.file.stat().size:
        return SIGBUS
    if vma.shared:
        (pages, at, _), = page_cache.backing(vma.file, offset, PAGE)
        space.machine.mem.map_shared(page, PAGE, vma.perms, pages, at)
    else:
        space.machine.mem.map(page, PAGE, vma.perms)
        space.machine.mem.write(page, vma.file.pread(PAGE, offset))
    return RETRY
